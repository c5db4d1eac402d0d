// Benchmarks 3 and 6: what the hook's Commit costs the host, and how long an event whose sync
// publish failed waits for the relay.
#include <array>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_database.h"
#include "bench/benchmarks.h"
#include "bench/worker_harness.h"
#include "mysql/connection.h"
#include "room_outbox/hook.h"
#include "support/fake_im_server.h"

namespace room_outbox::bench {
namespace {

using std::chrono::milliseconds;

// Samples taken before measuring (connections, prepared statements, keep-alive, buffer pool).
constexpr size_t kWarmup = 100;

struct Latency {
  double p50 = 0;
  double p99 = 0;
  size_t samples = 0;
};

Latency Summarize(const std::vector<double>& samples_ms) {
  return Latency{Percentile(samples_ms, 50), Percentile(samples_ms, 99), samples_ms.size()};
}

std::string LatencyText(const Latency& l) {
  return "p50 " + FormatFixed(l.p50, 3) + " ms, p99 " + FormatFixed(l.p99, 3) + " ms (" +
         FormatCount(static_cast<double>(l.samples)) + " samples)";
}

std::string LatencyRatio(const Latency& l, const Latency& base, const std::string& base_id) {
  return FormatRatio(l.p50, base.p50) + " p50, " + FormatRatio(l.p99, base.p99) + " p99 vs " +
         base_id;
}

// One command with three pushed events, in room `room`.
struct CommandWithEvents {
  Command command;
  std::vector<Event> events;
};

CommandWithEvents MakeCommand(const std::string& prefix, size_t n, const std::string& room,
                              int64_t room_seq) {
  CommandWithEvents out;
  out.command.command_id = prefix + "-c" + std::to_string(n);
  out.command.room_id = room;
  out.command.command_type = "SendGift";
  out.command.request_id = "req-" + std::to_string(n);
  out.command.room_seq = room_seq;
  out.command.payload = R"({"user_id":"u-)" + std::to_string(n) + R"(","gift":"rose"})";
  for (size_t k = 0; k < kBenchEventTypes.size(); ++k) {
    Event event;
    event.event_id = out.command.command_id + "-e" + std::to_string(k);
    event.event_type = kBenchEventTypes[k];
    event.room_seq = room_seq;
    event.payload = R"({"user_id":"u-)" + std::to_string(n) + R"("})";
    out.events.push_back(std::move(event));
  }
  return out;
}

std::unique_ptr<Hook> MakeBenchHook(const MysqlOptions& mysql, const TencentImOptions& im,
                                    SyncPublishMode sync_publish = SyncPublishMode::kInline) {
  HookOptions options;
  options.mysql = mysql;
  options.tencent_im = im;
  options.node_id = "bench-node";
  options.sync_publish = sync_publish;
  Error error;
  std::unique_ptr<Hook> hook = CreateHook(options, &error);
  if (!hook) {
    throw BenchFailure("CreateHook: " + error.message);
  }
  return hook;
}

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
  auto conn = Unwrap(MariaDbConnection::Connect(db.Options()), "connecting");
  PreparedStatement* stmt = Unwrap(conn->Prepared("insert_one", kInsert), "prepare insert_one");
  std::vector<double> samples;
  samples.reserve(ctx.commit_samples);
  const std::string envelope =
      R"({"event_id":"x","event_type":"RoomGiftSent","room_id":"room-1","room_seq":1,)"
      R"("command_id":"c","request_id":"r","node_id":"bench-node","occurred_at_ms":1,)"
      R"("payload":{"user_id":"u-1"}})";
  for (size_t n = 0; n < kWarmup + ctx.commit_samples; ++n) {
    const int64_t now = NowMs();
    const std::array<SqlValue, 8> params = {"ins-e" + std::to_string(n),
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

}  // namespace

void RunCommitLatency(const BenchContext& ctx, Report& report) {
  auto up = StartStub(milliseconds(0));
  auto down = StartStub(milliseconds(0));
  down->SetMode("down");  // every request answered with IM ErrorCode 10002 at once

  // IM down as an outage looks: every answer later than the sync timeout.
  auto silent = StartStub(milliseconds(0));
  silent->SetDefaultFault(testing::FakeImFault::Ok().After(milliseconds(2000)));

  const Latency insert = TimeSingleInserts(ctx);
  const CommitRun ok = TimeCommits(ctx, "bench_commit_up", *up);
  const CommitRun failing = TimeCommits(ctx, "bench_commit_down", *down);
  const CommitRun breaker_open = TimeCommits(ctx, "bench_commit_breaker", *silent);
  const CommitRun sync_off =
      TimeCommits(ctx, "bench_commit_sync_off", *up, SyncPublishMode::kOff);
  silent->ClearFaults();

  const std::string hook_settings =
      "CreateHook defaults (sync_publish_timeout=500ms, per_room_order), requests_per_second=0; "
      "a new room per command";
  report.Add({"3a", "Hook Commit, 1 command + 3 events, IM up (instant stub, sync publish OK)",
              hook_settings,
              LatencyText(ok.latency) + "; events published " +
                  FormatCount(static_cast<double>(ok.published_events)) + ", pending " +
                  FormatCount(static_cast<double>(ok.pending_events)),
              LatencyRatio(ok.latency, insert, "3c")});
  report.Add({"3b",
              "Hook Commit, 1 command + 3 events, IM answering ErrorCode 10002 (rows stay pending; "
              "the sync breaker opens after 3 commits)",
              hook_settings,
              LatencyText(failing.latency) + "; events published " +
                  FormatCount(static_cast<double>(failing.published_events)) + ", pending " +
                  FormatCount(static_cast<double>(failing.pending_events)),
              LatencyRatio(failing.latency, insert, "3c")});
  report.Add({"3c", "One-row autocommit INSERT into room_outbox (hook's columns)",
              "server-side prepared statement over the store's connection wrapper",
              LatencyText(insert), "x1"});
  auto events_text = [](const CommitRun& run) {
    return "; events published " + FormatCount(static_cast<double>(run.published_events)) +
           ", pending " + FormatCount(static_cast<double>(run.pending_events));
  };
  report.Add({"3d",
              "Hook Commit, 1 command + 3 events, IM down (every answer after 2 s), sync breaker "
              "open (opened by the warm-up's first 3 commits)",
              hook_settings, LatencyText(breaker_open.latency) + events_text(breaker_open),
              LatencyRatio(breaker_open.latency, sync_off.latency, "3e")});
  report.Add({"3e", "Hook Commit, 1 command + 3 events, sync publish off (sync_publish = off)",
              hook_settings, LatencyText(sync_off.latency) + events_text(sync_off),
              LatencyRatio(sync_off.latency, insert, "3c")});
}

void RunCommitToPublished(const BenchContext& ctx, Report& report) {
  constexpr size_t kRooms = 50;
  auto hook_stub = StartStub(milliseconds(0));
  hook_stub->SetMode("down");  // the hook's sync publish always fails
  auto relay_stub = StartStub(milliseconds(0));

  BenchDatabase db(ctx.socket, "bench_commit_to_published");
  auto hook = MakeBenchHook(db.Options(), hook_stub->ClientOptions());
  const relay::WorkerOptions options = DefaultWorkerOptions();
  TencentImOptions relay_im = relay_stub->ClientOptions();
  relay_im.requests_per_second = 200;  // the relay's default budget
  WorkerHarness relay(db.Options(), relay_im, options);
  relay.Start();

  const auto gap = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(1.0 / ctx.latency_commands_per_second));
  auto next = std::chrono::steady_clock::now();
  std::vector<int64_t> room_seq(kRooms, 0);
  for (size_t n = 0; n < ctx.latency_commands; ++n) {
    std::this_thread::sleep_until(next);
    next += gap;
    const size_t room = n % kRooms;
    CommandWithEvents c =
        MakeCommand("bench-c2p", n, "room-" + std::to_string(room), ++room_seq[room]);
    CommitResult result = hook->Commit(c.command, c.events);
    if (result.status != CommitStatus::kCommitted) {
      throw BenchFailure("commit->published: commit failed: " + result.error.message);
    }
  }
  const size_t rows = ctx.latency_commands * kBenchEventTypes.size();
  const bool all = relay.WaitForPublished(rows, milliseconds(60000));
  Stopwatch settle;
  while (db.PendingCount() > 0 && settle.Seconds() < 10) {
    std::this_thread::sleep_for(milliseconds(10));
  }
  relay.Stop();

  std::vector<double> latencies;
  for (const auto& row : db.Query("SELECT published_at_ms - created_at_ms FROM room_outbox "
                                  "WHERE status = 'published'")) {
    latencies.push_back(std::stod(row[0]));
  }
  const double retries = static_cast<double>(db.Scalar("SELECT SUM(retry_count) FROM room_outbox"));
  const Latency l = Summarize(latencies);
  const double poll_ms = static_cast<double>(options.poll_interval.count());
  report.Add(
      {"6",
       "Commit -> published (published_at_ms - created_at_ms), hook's sync publish failing, "
       "relay delivering; " +
           FormatCount(static_cast<double>(ctx.latency_commands)) + " commands x 3 events at " +
           FormatFixed(ctx.latency_commands_per_second, 0) + " commands/s over " +
           std::to_string(kRooms) + " rooms",
       "hook -> stub answering 10002; relay -> OK stub, " + DescribeSettings(options, 200) +
           " (worker defaults)",
       "p50 " + FormatCount(l.p50) + " ms, p99 " + FormatCount(l.p99) + " ms, max " +
           FormatCount(Percentile(latencies, 100)) + " ms (" + FormatCount(l.samples) + " of " +
           FormatCount(static_cast<double>(rows)) + " rows published" +
           (all ? "" : ", INCOMPLETE") + "; relay retries " + FormatCount(retries) + ")",
       FormatRatio(l.p50, poll_ms) + " p50, " + FormatRatio(l.p99, poll_ms) +
           " p99 vs poll_interval"});
}

}  // namespace room_outbox::bench
