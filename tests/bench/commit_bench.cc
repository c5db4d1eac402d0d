// Benchmarks 3 and 6: what the hook's Commit costs the host, and how long an event whose sync
// publish failed waits for the relay.
#include <array>
#include <atomic>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_database.h"
#include "bench/benchmarks.h"
#include "bench/commit_floor.h"
#include "bench/commit_support.h"
#include "bench/worker_harness.h"
#include "config/config.h"
#include "core/mysql/connection.h"
#include "daemon/wake_listener.h"
#include "daemon/wake_socket.h"
#include "room_outbox/hook.h"
#include "support/fake_im_server.h"

namespace room_outbox::bench {
namespace {

using std::chrono::milliseconds;

struct CommitRun {
  Latency latency;
  size_t published_events = 0;
  size_t pending_events = 0;
};

// `samples` Commits, each of a new room (so the per-room order check never skips the sync
// publish), timed one by one after kWarmup untimed ones (which also open the sync breaker when
// IM is failing: it opens after 3 failed sync publishes).
CommitRun TimeCommits(const BenchContext& ctx, const std::string& name,
                      const testing::FakeImServer& stub,
                      SyncPublishMode sync_publish = SyncPublishMode::kInline) {
  BenchDatabase db(ctx.socket, name);
  auto hook = MakeBenchHook(db.Options(), stub.ClientOptions(), sync_publish);
  CommitRun run;
  std::vector<double> samples;
  samples.reserve(ctx.commit_samples);
  for (size_t n = 0; n < kWarmup + ctx.commit_samples; ++n) {
    CommandWithEvents c = MakeCommand(name, n, "room-" + std::to_string(n), 1);
    Stopwatch watch;
    CommitResult result = hook->Commit(c.command, c.events);
    const double ms = watch.Millis();
    if (result.status != CommitStatus::kCommitted) {
      throw BenchFailure(name + ": commit failed: " + result.error.message);
    }
    if (n < kWarmup) {
      continue;
    }
    samples.push_back(ms);
    for (const EventDelivery& d : result.events) {
      (d.state == DeliveryState::kPending ? run.pending_events : run.published_events) += 1;
    }
  }
  run.latency = Summarize(samples);
  return run;
}

// One-row autocommit INSERTs of the hook's outbox columns through the same connection wrapper
// and prepared-statement path the store uses.
Latency TimeSingleInserts(const BenchContext& ctx) {
  constexpr std::string_view kInsert =
      "INSERT INTO room_outbox (event_id, event_type, room_id, command_id, request_id, envelope, "
      "status, retry_count, next_attempt_at_ms, claim_token, created_at_ms, updated_at_ms) "
      "VALUES (?, ?, ?, ?, ?, ?, 'pending', 0, 0, NULL, ?, ?)";
  BenchDatabase db(ctx.socket, "bench_commit_insert");
  auto conn = Unwrap(core::MariaDbConnection::Connect(db.Options()), "connecting");
  core::PreparedStatement* stmt =
      Unwrap(conn->Prepared("insert_one", kInsert), "prepare insert_one");
  std::vector<double> samples;
  samples.reserve(ctx.commit_samples);
  const std::string envelope =
      R"({"event_id":"x","event_type":"RoomGiftSent","room_id":"room-1","room_seq":1,)"
      R"("command_id":"c","request_id":"r","node_id":"bench-node","occurred_at_ms":1,)"
      R"("payload":{"user_id":"u-1"}})";
  for (size_t n = 0; n < kWarmup + ctx.commit_samples; ++n) {
    const int64_t now = NowMs();
    const std::array<core::SqlValue, 8> params = {"ins-e" + std::to_string(n),
                                                  std::string("RoomGiftSent"),
                                                  "room-" + std::to_string(n),
                                                  "ins-c" + std::to_string(n),
                                                  "req-" + std::to_string(n),
                                                  envelope,
                                                  now,
                                                  now};
    Stopwatch watch;
    Unwrap(stmt->Execute(params), "insert_one");
    const double ms = watch.Millis();
    if (n >= kWarmup) {
      samples.push_back(ms);
    }
  }
  return Summarize(samples);
}

// "42.1 (min 40, max 45) operator new calls, 97.3 (min 95, max 101) malloc/calloc/realloc calls
// (operator new's included) per command, over 200 commands"
std::string AllocText(const AllocFigures& a) {
  auto one = [](double mean, uint64_t lo, uint64_t hi) {
    return FormatFixed(mean, 1) + " (min " + std::to_string(lo) + ", max " + std::to_string(hi) +
           ")";
  };
  std::string text =
      one(a.operator_new_mean, a.operator_new_min, a.operator_new_max) + " operator new calls";
  text += a.malloc_counted ? ", " + one(a.malloc_mean, a.malloc_min, a.malloc_max) +
                                 " malloc/calloc/realloc calls (operator new's included)"
                           : "; malloc not counted in a sanitizer build";
  return text + " per command, over " + std::to_string(a.commands) + " commands";
}

}  // namespace

void RunCommitLatency(const BenchContext& ctx, Report& report) {
  auto up = StartStub(milliseconds(0));
  auto down = StartStub(milliseconds(0));
  down->SetMode("down");  // every request answered with IM ErrorCode 10002 at once

  // IM down as an outage looks: every answer later than sync_publish_timeout.
  auto silent = StartStub(milliseconds(0));
  silent->SetDefaultFault(testing::FakeImFault::Ok().After(milliseconds(2000)));

  const Latency insert = TimeSingleInserts(ctx);
  const CommitRun ok = TimeCommits(ctx, "bench_commit_up", *up);
  const CommitRun failing = TimeCommits(ctx, "bench_commit_down", *down);
  const CommitRun breaker_open = TimeCommits(ctx, "bench_commit_breaker", *silent);
  const FloorRun floor = RunFloorSideBySide(ctx, *up);
  silent->ClearFaults();

  const std::string hook_settings =
      "CreateHook defaults (sync_publish_timeout=500ms, per_room_order), requests_per_second=0; "
      "a new room per command";
  auto events_text = [](size_t published, size_t pending) {
    return "; events published " + FormatCount(static_cast<double>(published)) + ", pending " +
           FormatCount(static_cast<double>(pending));
  };
  report.Add({"3a", "Hook Commit, 1 command + 3 events, IM up (instant stub, sync publish OK)",
              hook_settings,
              LatencyText(ok.latency) + events_text(ok.published_events, ok.pending_events),
              LatencyRatio(ok.latency, insert, "3c")});
  report.Add(
      {"3b",
       "Hook Commit, 1 command + 3 events, IM answering ErrorCode 10002 (rows stay pending; "
       "the sync breaker opens after 3 commits)",
       hook_settings,
       LatencyText(failing.latency) + events_text(failing.published_events, failing.pending_events),
       LatencyRatio(failing.latency, insert, "3c")});
  report.Add({"3c", "One-row autocommit INSERT into room_outbox (hook's columns)",
              "server-side prepared statement over the store's connection wrapper",
              LatencyText(insert), "x1"});
  report.Add({"3d",
              "Hook Commit, 1 command + 3 events, IM down (every answer after 2 s), sync breaker "
              "open (opened by the warm-up's first 3 commits)",
              hook_settings,
              LatencyText(breaker_open.latency) +
                  events_text(breaker_open.published_events, breaker_open.pending_events),
              LatencyRatio(breaker_open.latency, floor.sync_off, "3e")});
  report.Add(
      {"3e", "Hook Commit, 1 command + 3 events, sync_publish = off",
       hook_settings + "; interleaved one by one with 3f and 3g",
       LatencyText(floor.sync_off) + events_text(floor.published_events, floor.pending_events),
       LatencyRatio(floor.sync_off, floor.floor, "3f") + " (goal: x1.3 p50, x1.5 p99); " +
           "median of paired ratios x" + FormatFixed(floor.sync_off_paired_ratio, 2)});
  report.Add({"3f",
              "Floor: the minimal hand-written transaction writing the same rows as 3e (BEGIN; "
              "INSERT the command log row; ONE 3-row INSERT of the outbox rows; COMMIT)",
              "server-side prepared statements over the store's connection wrapper; values bound "
              "before timing; interleaved one by one with 3e and 3g",
              LatencyText(floor.floor), LatencyRatio(floor.floor, insert, "3c")});
  report.Add({"3g",
              "The store alone: MariaDbHookStore::CommitCommand with what the hook hands it in "
              "3e (no token, envelopes encoded): the hook's own work is 3e - 3g",
              "interleaved one by one with 3e and 3f", LatencyText(floor.store),
              LatencyRatio(floor.store, floor.floor, "3f") + "; median of paired ratios x" +
                  FormatFixed(floor.store_paired_ratio, 2)});
  report.Add(
      {"3h", "Heap allocations per command: Hook Commit (3e), the store alone (3g), floor (3f)",
       "counted on the committing thread only, inside the call (tests/bench/"
       "alloc_counter.h); untimed commands after 3e-3g",
       "Commit: " + AllocText(floor.commit_allocs) + "; store: " + AllocText(floor.store_allocs) +
           "; floor: " + AllocText(floor.floor_allocs),
       FormatRatio(floor.commit_allocs.malloc_mean, floor.floor_allocs.malloc_mean) +
           " (Commit), " +
           FormatRatio(floor.store_allocs.malloc_mean, floor.floor_allocs.malloc_mean) +
           " (store) malloc calls vs 3f"});
}

namespace {

// One run of benchmark 6: `ctx.latency_commands` commands whose sync publish fails, a relay
// worker delivering; with `wake`, the hook and the worker share a [wake] socket.
struct CommitToPublishedRun {
  Latency latency;
  double max_ms = 0;
  size_t rows = 0;
  bool all = false;
  double retries = 0;
  uint64_t wakeups = 0;
};

CommitToPublishedRun MeasureCommitToPublished(const BenchContext& ctx, const std::string& name,
                                              const relay::WorkerOptions& options, bool wake) {
  constexpr size_t kRooms = 50;
  auto hook_stub = StartStub(milliseconds(0));
  hook_stub->SetMode("down");  // the hook's sync publish always fails
  auto relay_stub = StartStub(milliseconds(0));

  BenchDatabase db(ctx.socket, name);
  HookOptions hook_options = BenchHookOptions(db.Options(), hook_stub->ClientOptions());
  TencentImOptions relay_im = relay_stub->ClientOptions();
  relay_im.requests_per_second = 200;  // the relay's default budget
  WorkerHarness relay(db.Options(), relay_im, options);
  std::unique_ptr<relay::WakeListener> listener;
  std::atomic<uint64_t> wakeups{0};
  if (wake) {
    std::filesystem::create_directories(ctx.work_dir);
    hook_options.wake_socket = ctx.work_dir + "/" + name + ".wake.sock";
    listener = ListenForWakes("commit->published", hook_options.wake_socket, relay, wakeups);
  }
  auto hook = MakeBenchHook(hook_options);
  relay.Start();

  const auto gap = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(1.0 / ctx.latency_commands_per_second));
  auto next = std::chrono::steady_clock::now();
  std::vector<int64_t> room_seq(kRooms, 0);
  for (size_t n = 0; n < ctx.latency_commands; ++n) {
    std::this_thread::sleep_until(next);
    next += gap;
    const size_t room = n % kRooms;
    CommandWithEvents c = MakeCommand(name, n, "room-" + std::to_string(room), ++room_seq[room]);
    CommitResult result = hook->Commit(c.command, c.events);
    if (result.status != CommitStatus::kCommitted) {
      throw BenchFailure("commit->published: commit failed: " + result.error.message);
    }
  }
  CommitToPublishedRun run;
  run.rows = ctx.latency_commands * kBenchEventTypes.size();
  run.all = relay.WaitForPublished(run.rows, milliseconds(60000));
  Stopwatch settle;
  while (db.PendingCount() > 0 && settle.Seconds() < 10) {
    std::this_thread::sleep_for(milliseconds(10));
  }
  relay.Stop();
  listener.reset();

  std::vector<double> latencies;
  for (const auto& row : db.Query("SELECT published_at_ms - created_at_ms FROM room_outbox "
                                  "WHERE status = 'published'")) {
    latencies.push_back(std::stod(row[0]));
  }
  run.retries = static_cast<double>(db.Scalar("SELECT SUM(retry_count) FROM room_outbox"));
  run.latency = Summarize(latencies);
  run.max_ms = Percentile(latencies, 100);
  run.wakeups = wakeups.load();
  return run;
}

std::string CommitToPublishedText(const CommitToPublishedRun& run) {
  const Latency& l = run.latency;
  return "p50 " + FormatCount(l.p50) + " ms, p99 " + FormatCount(l.p99) + " ms, max " +
         FormatCount(run.max_ms) + " ms (" + FormatCount(static_cast<double>(l.samples)) + " of " +
         FormatCount(static_cast<double>(run.rows)) + " rows published" +
         (run.all ? "" : ", INCOMPLETE") + "; relay retries " + FormatCount(run.retries) + ")";
}

}  // namespace

void RunCommitToPublished(const BenchContext& ctx, Report& report) {
  const relay::WorkerOptions options = DefaultWorkerOptions();
  const CommitToPublishedRun polled =
      MeasureCommitToPublished(ctx, "bench_commit_to_published", options, false);
  const CommitToPublishedRun woken =
      MeasureCommitToPublished(ctx, "bench_commit_to_published_wake", options, true);
  relay::WorkerOptions unpaced = options;
  unpaced.room_min_interval = milliseconds(0);
  const CommitToPublishedRun woken_unpaced =
      MeasureCommitToPublished(ctx, "bench_commit_to_published_wake0", unpaced, true);
  const double poll_ms = static_cast<double>(options.poll_interval.count());
  const std::string what =
      "Commit -> published (published_at_ms - created_at_ms), hook's sync publish failing, "
      "relay delivering; " +
      FormatCount(static_cast<double>(ctx.latency_commands)) + " commands x 3 events at " +
      FormatFixed(ctx.latency_commands_per_second, 0) + " commands/s over 50 rooms";
  const std::string settings = "hook -> stub answering 10002; relay -> OK stub, " +
                               DescribeSettings(options, 200) + " (worker defaults)";
  report.Add({"6", what, settings, CommitToPublishedText(polled),
              FormatRatio(polled.latency.p50, poll_ms) + " p50, " +
                  FormatRatio(polled.latency.p99, poll_ms) + " p99 vs poll_interval"});
  report.Add({"6'", what + "; hook and relay share a [wake] socket",
              settings + "; " + FormatCount(static_cast<double>(woken.wakeups)) +
                  " wake-up datagrams received",
              CommitToPublishedText(woken),
              FormatRatio(woken.latency.p50, polled.latency.p50) + " p50, " +
                  FormatRatio(woken.latency.p99, polled.latency.p99) +
                  " p99 vs 6 (goal: p99 <= 100 ms)"});
  // A command's 3 events go to one room: with the 50 ms pace the third leaves >= 100 ms after
  // the first, whatever wakes the relay. Without the pace the wake-up alone is measured.
  report.Add({"6''", what + "; [wake] socket, per-room pace off",
              "hook -> stub answering 10002; relay -> OK stub, " + DescribeSettings(unpaced, 200) +
                  "; " + FormatCount(static_cast<double>(woken_unpaced.wakeups)) +
                  " wake-up datagrams received",
              CommitToPublishedText(woken_unpaced),
              FormatRatio(woken_unpaced.latency.p50, polled.latency.p50) + " p50, " +
                  FormatRatio(woken_unpaced.latency.p99, polled.latency.p99) +
                  " p99 vs 6 (goal: p99 <= 100 ms)"});
  RunWakePaths(ctx, report);
}

}  // namespace room_outbox::bench
