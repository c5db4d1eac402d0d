// Benchmarks 1 and 2: how fast a backlog drains.
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_database.h"
#include "bench/benchmarks.h"
#include "bench/worker_harness.h"
#include "core/mysql/connection.h"

namespace room_outbox::bench {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// A single drain can never take longer than this (the slowest measured variant is ~25s).
constexpr seconds kDrainLimit{300};

struct DrainRun {
  size_t published = 0;
  double seconds = 0;
  bool complete = false;  // every row was published and marked
  // Pauses of kStall or more between consecutive published_at_ms values (no row marked).
  size_t stalls = 0;
  double stalled_seconds = 0;
  double Rate() const { return seconds > 0 ? static_cast<double>(published) / seconds : 0; }
};

// A pause in marking at least this long counts as a stall in the drain.
constexpr int64_t kStallMs = 500;

// Counts the stalls of a finished drain from the rows' published_at_ms.
void CountStalls(BenchDatabase& db, DrainRun& run) {
  int64_t previous = -1;
  for (const auto& row : db.Query("SELECT DISTINCT published_at_ms FROM room_outbox WHERE "
                                  "status = 'published' ORDER BY published_at_ms")) {
    const int64_t at = std::stoll(row[0]);
    if (previous >= 0 && at - previous >= kStallMs) {
      ++run.stalls;
      run.stalled_seconds += static_cast<double>(at - previous) / 1000.0;
    }
    previous = at;
  }
}

// A fresh database holding `rows` pending rows over ctx.rooms rooms.
std::unique_ptr<BenchDatabase> FilledDatabase(const BenchContext& ctx, const std::string& name,
                                              size_t rows) {
  auto db = std::make_unique<BenchDatabase>(ctx.socket, name);
  OutboxFill fill;
  fill.rows = rows;
  fill.rooms = ctx.rooms;
  fill.id_prefix = name;
  fill.created_at_ms = NowMs();
  InsertPendingRows(*db, fill);
  return db;
}

// Runs the relay's daemon loop over `rows` fresh pending rows. With `window` set, stops after it
// and counts what was delivered in it; without, runs until every row is published in the
// database (bounded by kDrainLimit).
DrainRun RunWorkerLoop(const BenchContext& ctx, const std::string& name, size_t rows,
                       const relay::WorkerOptions& options, TencentImOptions im,
                       std::optional<seconds> window, bool claim_ahead = true) {
  auto db = FilledDatabase(ctx, name, rows);
  WorkerHarness harness(db->Options(), im, options, claim_ahead);
  DrainRun run;
  Stopwatch watch;
  harness.Start();
  if (window) {
    std::this_thread::sleep_for(*window);
    run.published = harness.metrics().publish_success();
    run.seconds = watch.Seconds();
    harness.Stop();
    return run;
  }
  const milliseconds limit = std::chrono::duration_cast<milliseconds>(kDrainLimit);
  if (harness.WaitForPublished(rows, limit)) {
    // Delivered is counted before the round's marks: wait for the database to say so too.
    while (db->PendingCount() > 0 && watch.Seconds() < static_cast<double>(kDrainLimit.count())) {
      std::this_thread::sleep_for(milliseconds(5));
    }
  }
  run.seconds = watch.Seconds();
  harness.Stop();
  run.published = rows - static_cast<size_t>(db->PendingCount());
  run.complete = run.published == rows;
  CountStalls(*db, run);
  return run;
}

// The seed's V1 loop: one RunRound per tick, then poll_interval of sleep whatever the round
// found, `ticks` times.
DrainRun RunV1Sample(const BenchContext& ctx, const relay::WorkerOptions& options,
                     const TencentImOptions& im) {
  auto db = FilledDatabase(ctx, "bench_drain_v1", ctx.drain_rows);
  WorkerHarness harness(db->Options(), im, options);
  DrainRun run;
  Stopwatch watch;
  for (int tick = 0; tick < ctx.v1_ticks; ++tick) {
    run.published += harness.worker().RunRound().marks.published;
    std::this_thread::sleep_for(options.poll_interval);
  }
  run.seconds = watch.Seconds();
  return run;
}

// Claim + MarkPublished in batches, no publishing: what the database allows the relay at best.
DrainRun RunClaimMarkCeiling(const BenchContext& ctx, bool per_room_order) {
  auto db = FilledDatabase(ctx, per_room_order ? "bench_ceiling_room" : "bench_ceiling_none",
                           ctx.drain_rows);
  auto store = relay::MakeMariaDbRelayStore(db->Options());
  Unwrap(store->Connect(), "connecting the ceiling store");
  DrainRun run;
  Stopwatch watch;
  while (true) {
    relay::ClaimOptions claim_options;
    claim_options.limit = 100;
    claim_options.rooms.per_room_order = per_room_order;
    relay::Claim claim = Unwrap(store->ClaimDue(claim_options), "ClaimDue");
    if (claim.rows.empty()) {
      break;
    }
    std::vector<int64_t> ids;
    for (const relay::OutboxRow& row : claim.rows) ids.push_back(row.id);
    run.published += Unwrap(store->MarkPublished(claim.token, ids, {}), "MarkPublished");
  }
  run.seconds = watch.Seconds();
  run.complete = run.published == ctx.drain_rows;
  return run;
}

// Plain prepared UPDATEs marking 100 ids at a time (ids read up front, not timed).
DrainRun RunPlainUpdateCeiling(const BenchContext& ctx) {
  constexpr size_t kBatch = 100;
  auto db = FilledDatabase(ctx, "bench_ceiling_update", ctx.drain_rows);
  std::vector<int64_t> ids;
  for (const auto& row : db->Query("SELECT id FROM room_outbox ORDER BY id")) {
    ids.push_back(std::stoll(row[0]));
  }
  auto conn = Unwrap(core::MariaDbConnection::Connect(db->Options()), "connecting");
  std::string sql =
      "UPDATE room_outbox SET status = 'published', last_error = NULL, published_at_ms = ?, "
      "updated_at_ms = ?, claim_token = NULL WHERE status = 'pending' AND id IN (";
  for (size_t i = 0; i < kBatch; ++i) sql += i == 0 ? "?" : ", ?";
  sql += ")";
  core::PreparedStatement* stmt = Unwrap(conn->Prepared("mark_batch", sql), "prepare mark_batch");
  DrainRun run;
  Stopwatch watch;
  for (size_t at = 0; at < ids.size(); at += kBatch) {
    const int64_t now = NowMs();
    std::vector<core::SqlValue> params = {now, now};
    for (size_t k = 0; k < kBatch; ++k) params.emplace_back(ids[std::min(at + k, ids.size() - 1)]);
    Unwrap(stmt->Execute(params), "mark_batch");
    run.published += static_cast<size_t>(stmt->AffectedRows());
  }
  run.seconds = watch.Seconds();
  run.complete = run.published == ctx.drain_rows;
  return run;
}

std::string RateText(const DrainRun& run) {
  std::string text = FormatCount(run.Rate()) + " rows/s (" + FormatCount(run.published) +
                     " rows in " + FormatFixed(run.seconds, 1) + " s)";
  if (run.stalls > 0) {
    text += "; " + std::to_string(run.stalls) + " pauses >= " + std::to_string(kStallMs) +
            " ms without a mark, " + FormatFixed(run.stalled_seconds, 1) + " s in all";
  }
  return run.complete ? text : text + " INCOMPLETE";
}

}  // namespace

std::unique_ptr<testing::FakeImServer> StartStub(milliseconds latency) {
  testing::FakeImServerOptions options;
  options.latency = latency;
  options.record_requests = false;
  options.record_bodies = false;
  auto stub = std::make_unique<testing::FakeImServer>(options);
  if (!stub->running()) {
    throw BenchFailure("fake IM server: " + stub->start_error());
  }
  return stub;
}

void RunBacklogDrain(const BenchContext& ctx, Report& report) {
  auto stub = StartStub(milliseconds(0));
  const TencentImOptions im = stub->ClientOptions();  // requests_per_second = 0
  const std::string rows = FormatCount(static_cast<double>(ctx.drain_rows)) + " rows over " +
                           std::to_string(ctx.rooms) + " rooms";

  relay::WorkerOptions defaults = DefaultWorkerOptions();
  relay::WorkerOptions unpaced = defaults;
  unpaced.room_min_interval = milliseconds(0);
  relay::WorkerOptions unordered = unpaced;
  unordered.ordering = relay::Ordering::kNone;
  relay::WorkerOptions v1 = unordered;
  v1.max_in_flight = 1;

  const DrainRun relay_default =
      RunWorkerLoop(ctx, "bench_drain_default", ctx.drain_rows, defaults, im, std::nullopt);
  const DrainRun relay_unpaced =
      RunWorkerLoop(ctx, "bench_drain_unpaced", ctx.drain_rows, unpaced, im, std::nullopt);
  const DrainRun relay_unordered =
      RunWorkerLoop(ctx, "bench_drain_unordered", ctx.drain_rows, unordered, im, std::nullopt);
  const DrainRun relay_sequential = RunWorkerLoop(ctx, "bench_drain_sequential", ctx.drain_rows,
                                                  defaults, im, std::nullopt, false);
  const DrainRun unpaced_sequential = RunWorkerLoop(
      ctx, "bench_drain_unpaced_sequential", ctx.drain_rows, unpaced, im, std::nullopt, false);
  // Rooms many enough that the pace does not bind: 10 rows per room.
  BenchContext many = ctx;
  many.rooms = std::max<size_t>(ctx.rooms * 10, 1);
  const DrainRun many_default =
      RunWorkerLoop(many, "bench_drain_many", ctx.drain_rows, defaults, im, std::nullopt);
  const DrainRun many_unpaced =
      RunWorkerLoop(many, "bench_drain_many_unpaced", ctx.drain_rows, unpaced, im, std::nullopt);
  const DrainRun seed_v1 = RunV1Sample(ctx, v1, im);
  const DrainRun ceiling_claim = RunClaimMarkCeiling(ctx, true);
  const DrainRun ceiling_claim_none = RunClaimMarkCeiling(ctx, false);
  const DrainRun ceiling_update = RunPlainUpdateCeiling(ctx);

  const double v1_rate = seed_v1.Rate();
  const double ceiling = ceiling_claim.Rate();
  auto vs = [&](const DrainRun& run) {
    return FormatRatio(run.Rate(), v1_rate) + " vs 1b; " + FormatRatio(run.Rate(), ceiling) +
           " vs 1c";
  };
  report.Add({"1a", "Backlog drain, relay worker (OutboxWorker::Run), instant stub, " + rows,
              DescribeSettings(defaults, 0) + " (worker defaults; budget off)",
              RateText(relay_default), vs(relay_default)});
  report.Add({"1a'", "same, per-room pace off", DescribeSettings(unpaced, 0),
              RateText(relay_unpaced), vs(relay_unpaced)});
  report.Add({"1a''", "same, ordering off", DescribeSettings(unordered, 0),
              RateText(relay_unordered), vs(relay_unordered)});
  report.Add({"1a-seq",
              "as 1a, no second store (a paced relay never claims ahead: the same code path)",
              DescribeSettings(defaults, 0) + "; no second connection", RateText(relay_sequential),
              vs(relay_sequential) + "; 1a " +
                  FormatRatio(relay_default.Rate(), relay_sequential.Rate()) + " vs this"});
  report.Add({"1a'-seq", "as 1a', without claiming ahead",
              DescribeSettings(unpaced, 0) + "; no second connection", RateText(unpaced_sequential),
              vs(unpaced_sequential) + "; 1a' " +
                  FormatRatio(relay_unpaced.Rate(), unpaced_sequential.Rate()) + " vs this"});
  const std::string many_rows = FormatCount(static_cast<double>(ctx.drain_rows)) + " rows over " +
                                std::to_string(many.rooms) + " rooms";
  report.Add({"1a-many", "as 1a, " + many_rows, DescribeSettings(defaults, 0),
              RateText(many_default),
              vs(many_default) + "; " + FormatRatio(many_default.Rate(), many_unpaced.Rate()) +
                  " vs 1a'-many"});
  report.Add({"1a'-many", "as 1a', " + many_rows, DescribeSettings(unpaced, 0),
              RateText(many_unpaced), vs(many_unpaced)});
  const double v1_total = v1_rate > 0 ? static_cast<double>(ctx.drain_rows) / v1_rate : 0;
  report.Add({"1b",
              "Seed V1 loop: RunRound then sleep poll_interval, sampled over " +
                  std::to_string(ctx.v1_ticks) + " ticks on the same backlog",
              DescribeSettings(v1, 0),
              FormatCount(v1_rate) + " rows/s (" + FormatCount(seed_v1.published) + " rows in " +
                  FormatFixed(seed_v1.seconds, 1) +
                  " s; extrapolated: " + FormatCount(ctx.drain_rows) + " rows in ~" +
                  FormatFixed(v1_total / 60, 0) + " min)",
              "x1"});
  report.Add({"1c", "Ceiling: ClaimDue(per_room_order, limit 100) + MarkPublished, no publishing",
              "store calls in a loop, one connection", RateText(ceiling_claim), "x1 (ceiling)"});
  report.Add({"1c'", "Ceiling: ClaimDue(ordering none, limit 100) + MarkPublished",
              "store calls in a loop, one connection", RateText(ceiling_claim_none),
              FormatRatio(ceiling_claim_none.Rate(), ceiling) + " vs 1c"});
  report.Add({"1c''", "Raw MariaDB: prepared UPDATE ... WHERE id IN (100 ids), autocommit",
              "ids read beforehand, one connection", RateText(ceiling_update),
              FormatRatio(ceiling_update.Rate(), ceiling) + " vs 1c"});
}

void RunBudgetedDrain(const BenchContext& ctx, Report& report) {
  constexpr milliseconds kLatency{20};
  constexpr double kBudget = 200;
  auto stub = StartStub(kLatency);
  TencentImOptions im = stub->ClientOptions();
  im.requests_per_second = kBudget;

  relay::WorkerOptions relay_options = DefaultWorkerOptions();
  relay::WorkerOptions sequential = relay_options;
  sequential.max_in_flight = 1;

  auto expected = [&](const relay::WorkerOptions& o) {
    return std::min(kBudget, static_cast<double>(o.max_in_flight) * 1000.0 /
                                 static_cast<double>(kLatency.count()));
  };
  auto backlog = [&](const relay::WorkerOptions& o) {
    // More than the window can drain, so the rate is never cut short by an empty outbox.
    return static_cast<size_t>(
               std::ceil(expected(o) * static_cast<double>(ctx.budget_window.count()) * 1.5)) +
           o.batch_size;
  };
  const DrainRun relay_run = RunWorkerLoop(ctx, "bench_budget_relay", backlog(relay_options),
                                           relay_options, im, ctx.budget_window);
  const DrainRun sequential_run = RunWorkerLoop(ctx, "bench_budget_seq", backlog(sequential),
                                                sequential, im, ctx.budget_window);
  const std::string what = "Backlog drain, stub latency 20ms, budget 200/s, " +
                           std::to_string(ctx.budget_window.count()) + " s window";
  const double relay_target = expected(relay_options);
  const double sequential_target = expected(sequential);
  report.Add({"2a", what, DescribeSettings(relay_options, kBudget) + " (worker defaults)",
              FormatCount(relay_run.Rate()) + " rows/s (" + FormatCount(relay_run.published) +
                  " rows); target min(200, 16/20ms) = " + FormatCount(relay_target) + "/s",
              FormatRatio(relay_run.Rate(), relay_target) + " of target; " +
                  FormatRatio(relay_run.Rate(), sequential_run.Rate()) + " vs 2b"});
  report.Add({"2b", what + ", sequential", DescribeSettings(sequential, kBudget),
              FormatCount(sequential_run.Rate()) + " rows/s (" +
                  FormatCount(sequential_run.published) +
                  " rows); target min(200, 1/20ms) = " + FormatCount(sequential_target) + "/s",
              FormatRatio(sequential_run.Rate(), sequential_target) + " of target"});
}

}  // namespace room_outbox::bench
