// Benchmark 6, rows 6a-6i: commit -> published for every path on which the hook leaves rows for
// the relay, with the hook and the relay sharing a [wake] socket and the per-room pace off, at
// 20 commands/s over 50 rooms and back to back (a room service's full speed) over 20 rooms.
// Only rows the relay delivered are measured (the event ids its IM stub received); rows the hook
// published itself are not. The relay runs without a request budget so the wake-up alone is
// measured (row 6''' beside them shows the shipped 200/s budget at full speed).
#include <algorithm>
#include <atomic>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

#include "bench/bench_database.h"
#include "bench/benchmarks.h"
#include "bench/commit_support.h"
#include "bench/worker_harness.h"
#include "config/config.h"
#include "daemon/wake_listener.h"
#include "daemon/wake_socket.h"
#include "room_outbox/hook.h"
#include "support/fake_im_server.h"

namespace room_outbox::bench {
namespace {

using std::chrono::milliseconds;
using testing::FakeImFault;
using testing::FakeImRequest;

// The sync lease a "dead" hook leaves on its rows in row 6e, from the relay's start.
constexpr milliseconds kDeadLease{300};

struct WakePath {
  std::string id;
  std::string what;
  SyncPublishMode sync = SyncPublishMode::kInline;
  // The hook's IM: the answer to each request (nullopt: OK at once).
  std::function<std::optional<FakeImFault>(const FakeImRequest&)> hook_im;
  milliseconds sync_publish_timeout{0};  // 0: the default
  size_t background_queue = 0;           // 0: the default
  // 6e: the commands are committed with the sync publish off and no wake-up before the relay
  // starts, then their rows are leased to a claim nobody releases, the leases running out one
  // command gap apart; latency is measured from each lease's end.
  bool dead_lease = false;
  // 6h: two commands per room back to back; the first one's sync publish fails.
  bool pairs = false;
  // 6i: a Hook per command, destroyed right after its Commit.
  bool hook_per_command = false;
};

struct PathRun {
  std::vector<double> latencies;
  size_t rows = 0;
  bool all = false;
  uint64_t wakeups = 0;
};

std::unique_ptr<testing::FakeImServer> StartRecordingStub() {
  testing::FakeImServerOptions o;
  o.record_bodies = false;
  auto stub = std::make_unique<testing::FakeImServer>(o);
  if (!stub->running()) throw BenchFailure("IM stub: " + stub->start_error());
  return stub;
}

HookOptions PathHookOptions(const WakePath& path, const BenchDatabase& db,
                            const testing::FakeImServer& hook_stub, const std::string& wake) {
  HookOptions o = BenchHookOptions(db.Options(), hook_stub.ClientOptions(), path.sync);
  if (path.sync_publish_timeout.count() > 0) o.sync_publish_timeout = path.sync_publish_timeout;
  if (path.background_queue > 0) o.background_queue = path.background_queue;
  o.wake_socket = path.dead_lease ? "" : wake;
  return o;
}

void CommitAll(const WakePath& path, const HookOptions& hook_options, const std::string& name,
               size_t commands, size_t rooms, double per_second) {
  std::unique_ptr<Hook> hook = path.hook_per_command ? nullptr : MakeBenchHook(hook_options);
  const auto gap = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(per_second > 0 ? 1.0 / per_second : 0.0));
  auto next = std::chrono::steady_clock::now();
  std::vector<int64_t> room_seq(rooms, 0);
  for (size_t n = 0; n < commands; ++n) {
    // In pairs (6h) both commands of a pair go to one room, back to back.
    const size_t slot = path.pairs ? n / 2 : n;
    if (per_second > 0 && (!path.pairs || n % 2 == 0)) std::this_thread::sleep_until(next);
    if (!path.pairs || n % 2 == 1) next += gap;
    const size_t room = slot % rooms;
    CommandWithEvents c = MakeCommand(name, n, "room-" + std::to_string(room), ++room_seq[room]);
    if (path.hook_per_command) hook = MakeBenchHook(hook_options);
    CommitResult result = hook->Commit(c.command, c.events);
    if (result.status != CommitStatus::kCommitted) {
      throw BenchFailure("wake path " + path.id + ": commit failed: " + result.error.message);
    }
    if (path.hook_per_command) hook.reset();  // hands its queued rows back
  }
}

// 6e: every row leased to a claim that never ends it; command k's lease runs out kDeadLease +
// k command gaps from now, and created_at_ms is set to that end so the row measures from it.
void LeaseToDeadHook(BenchDatabase& db, double per_second) {
  const int64_t gap_ms = per_second > 0 ? static_cast<int64_t>(1000.0 / per_second) : 0;
  const int64_t first = db.Scalar("SELECT MIN(id) FROM room_command_log");
  db.Exec(
      "UPDATE room_outbox o JOIN room_command_log l ON l.command_id = o.command_id SET "
      "o.claim_token = 'dead-hook', o.next_attempt_at_ms = "
      "CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED) + " +
      std::to_string(kDeadLease.count()) + " + (l.id - " + std::to_string(first) + ") * " +
      std::to_string(gap_ms) + " WHERE o.status = 'pending'");
  db.Exec("UPDATE room_outbox SET created_at_ms = next_attempt_at_ms WHERE status = 'pending'");
}

// `relay_budget`: the relay's requests_per_second (0: none).
PathRun MeasurePath(const BenchContext& ctx, const WakePath& path, size_t commands, size_t rooms,
                    double per_second, double relay_budget = 0) {
  const std::string name = "bench_wake_" + path.id + (per_second > 0 ? "_rate" : "_full") +
                           (relay_budget > 0 ? "_budget" : "");
  auto hook_stub = StartRecordingStub();
  if (path.hook_im) hook_stub->SetFaultFunction(path.hook_im);
  auto relay_stub = StartRecordingStub();
  BenchDatabase db(ctx.socket, name);
  relay::WorkerOptions options = DefaultWorkerOptions();
  options.room_min_interval = milliseconds(0);
  TencentImOptions relay_im = relay_stub->ClientOptions();
  relay_im.requests_per_second = relay_budget;
  WorkerHarness relay(db.Options(), relay_im, options);
  std::filesystem::create_directories(ctx.work_dir);
  const std::string wake = ctx.work_dir + "/" + name + ".wake.sock";
  std::atomic<uint64_t> wakeups{0};
  auto listener = ListenForWakes("wake path", wake, relay, wakeups);
  const HookOptions hook_options = PathHookOptions(path, db, *hook_stub, wake);
  if (path.dead_lease) {
    CommitAll(path, hook_options, name, commands, rooms, 0);
    LeaseToDeadHook(db, per_second);
    relay.Start();
  } else {
    relay.Start();
    CommitAll(path, hook_options, name, commands, rooms, per_second);
  }
  PathRun run;
  Stopwatch wait;
  while (db.PendingCount() > 0 && wait.Seconds() < 60) {
    std::this_thread::sleep_for(milliseconds(5));
  }
  run.all = db.PendingCount() == 0;
  relay.Stop();
  std::unordered_set<std::string> by_relay;
  for (const FakeImRequest& r : relay_stub->Requests()) by_relay.insert(r.event_id);
  run.rows = by_relay.size();
  for (const auto& row : db.Query("SELECT event_id, published_at_ms - created_at_ms FROM "
                                  "room_outbox WHERE status = 'published'")) {
    if (by_relay.count(row[0]) > 0) run.latencies.push_back(std::stod(row[1]));
  }
  run.wakeups = wakeups.load();
  return run;
}

std::string PathText(const PathRun& run) {
  if (run.latencies.empty()) return "no row left for the relay";
  const Latency l = Summarize(run.latencies);
  return "p50 " + FormatCount(l.p50) + " ms, p99 " + FormatCount(l.p99) + " ms, max " +
         FormatCount(Percentile(run.latencies, 100)) + " ms (" +
         FormatCount(static_cast<double>(run.rows)) + " rows by the relay" +
         (run.all ? "" : ", INCOMPLETE") + "; " + FormatCount(static_cast<double>(run.wakeups)) +
         " wake-ups)";
}

std::optional<FakeImFault> Answer(const FakeImFault& fault) { return fault; }

std::vector<WakePath> Paths() {
  const FakeImFault row_error = FakeImFault::ImError(10002, "internal error");
  // Every other room's requests answer after 200 ms: those commands time out (20 ms), the others
  // succeed, so three timeouts in a row never open the sync breaker.
  auto slow_even_rooms = [](const FakeImRequest& r) -> std::optional<FakeImFault> {
    const bool even = !r.room_id.empty() && (r.room_id.back() - '0') % 2 == 0;
    return even ? Answer(FakeImFault::Ok().After(milliseconds(200))) : std::nullopt;
  };
  return {
      {"6a", "row-scoped error (10002) on the hook's sync publish", SyncPublishMode::kInline,
       [=](const FakeImRequest&) { return Answer(row_error); }},
      {"6b", "sync publish off", SyncPublishMode::kOff, {}},
      {"6c", "the sync breaker open (HTTP 502: open after 3 commands, rows written due at once)",
       SyncPublishMode::kInline,
       [](const FakeImRequest&) { return Answer(FakeImFault::HttpStatus(502)); }},
      {"6d",
       "timeout (the hook's IM answers after 200 ms, sync_publish_timeout 20 ms, every "
       "other room)",
       SyncPublishMode::kInline, slow_even_rooms, milliseconds(20)},
      {"6e",
       "the sync lease running out (rows leased to a hook that never releases them; "
       "measured from each lease's end)",
       SyncPublishMode::kOff,
       {},
       {},
       0,
       true},
      {"6f", "background publish failing (10002)", SyncPublishMode::kBackground,
       [=](const FakeImRequest&) { return Answer(row_error); }},
      {"6g",
       "background queue full (background_queue 1, the hook's IM answering after 50 ms)",
       SyncPublishMode::kBackground,
       [](const FakeImRequest&) { return Answer(FakeImFault::Ok().After(milliseconds(50))); },
       {},
       1},
      {"6h",
       "earlier-pending room (commands in pairs per room, the first one's publish failing)",
       SyncPublishMode::kInline,
       [=](const FakeImRequest& r) {
         return r.room_seq % 2 == 1 ? Answer(row_error) : std::nullopt;
       },
       {},
       0,
       false,
       true},
      {"6i",
       "rows handed back at destruction (background, a Hook per command destroyed after "
       "its Commit, the hook's IM answering after 50 ms)",
       SyncPublishMode::kBackground,
       [](const FakeImRequest&) { return Answer(FakeImFault::Ok().After(milliseconds(50))); },
       {},
       0,
       false,
       false,
       true},
  };
}

}  // namespace

void RunWakePaths(const BenchContext& ctx, Report& report) {
  const size_t paced_commands = std::min<size_t>(ctx.latency_commands, 100);
  const size_t full_commands = std::min<size_t>(ctx.latency_commands, 200);
  for (const WakePath& path : Paths()) {
    const PathRun paced =
        MeasurePath(ctx, path, paced_commands, 50, ctx.latency_commands_per_second);
    const PathRun full = MeasurePath(ctx, path, full_commands, 20, 0);
    report.Add({path.id, "Commit -> published, rows the relay delivered: " + path.what,
                "[wake] socket, room_min_interval=0, no relay budget; " +
                    FormatCount(static_cast<double>(paced_commands)) + " commands x 3 events at " +
                    FormatFixed(ctx.latency_commands_per_second, 0) +
                    " commands/s over 50 rooms; " +
                    FormatCount(static_cast<double>(full_commands)) +
                    " commands back to back over 20 rooms",
                "at " + FormatFixed(ctx.latency_commands_per_second, 0) + "/s: " + PathText(paced) +
                    "; full speed: " + PathText(full),
                "goal: p99 <= 100 ms each"});
  }
  // The relay's shipped budget at full speed: 600 rows at 200 requests/s take 3 s however soon
  // the relay is woken.
  const WakePath row_error = Paths().front();
  const PathRun budget = MeasurePath(ctx, row_error, full_commands, 20, 0, 200);
  report.Add({"6a'", "6a at full speed with the relay's shipped budget",
              "as 6a, requests_per_second=200", "full speed: " + PathText(budget),
              "bound by the budget: " + FormatFixed(static_cast<double>(budget.rows) / 200.0, 1) +
                  " s for the rows at 200/s"});
}

}  // namespace room_outbox::bench
