// Benchmark 17: recovery at platform scale. An IM outage leaves pending rows in tens of thousands
// of rooms at once; the relay(s) must then drain them at Tencent's limit. A backlog of R rooms x K
// RoomGiftSent events (every room's first event, then every room's second, ..., all due: rows
// written by the SQL contract) is drained by real outbox-relay processes with pack_max_events 20,
// batch_size 100, requests_per_second = app_requests_per_second = the app's limit, the rest shipped
// defaults, against an IM stand-in with a 20 ms round trip that allows the app N calls/s (60007
// beyond) and each group 40 messages/s.
//
// Reported per drain: the time from the relays' start to the last row published, against
// Tencent's bound (every room's events in ceil(K / 20) messages, at N messages/s); messages/s and
// calls/s over that time; events per delivered message; 60007 answers; duplicates; the relays' and
// the database server's CPU seconds. A drain that does not finish within its cap reports the rate
// it reached and what was left. 17g-17j: 1 to 4 relays against a limit this machine cannot reach,
// the scale-out's ceiling. 17f: the rows the server reads for one claim (Handler_read_*) with
// 1,000 and 100,000 rooms backlogged. Nothing here asserts on speed.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_database.h"
#include "bench/bench_relay.h"
#include "bench/benchmarks.h"
#include "bench/child_process.h"
#include "store/mariadb_relay_store.h"

namespace room_outbox::bench {
namespace {

using std::chrono::milliseconds;

constexpr milliseconds kLatency{20};
constexpr int kGroupCap = 40;
constexpr size_t kPack = 20;
constexpr size_t kBatch = 100;
constexpr milliseconds kPendingPoll{100};

struct DrainSpec {
  std::string row;
  size_t rooms = 0;
  size_t events = 0;  // per room
  int app_limit = 0;
  size_t relays = 1;
};

struct DrainRun {
  DrainSpec spec;
  double seconds = 0;
  double cap_seconds = 0;
  bool drained = false;
  int64_t pending_left = 0;
  double relay_cpu = 0;
  double db_cpu = 0;
  bool relays_ok = true;
  testing::FakeImStats im;
  size_t Rows() const { return spec.rooms * spec.events; }
  // Tencent's bound: every room's events in ceil(K / pack) messages, at the app's limit.
  double BoundSeconds() const {
    const double messages =
        static_cast<double>(spec.rooms) * static_cast<double>((spec.events + kPack - 1) / kPack);
    return messages / static_cast<double>(spec.app_limit);
  }
};

std::unique_ptr<testing::FakeImServer> StartAppLimitedStub(int app_limit) {
  testing::FakeImServerOptions options;
  options.app_limit_per_second = app_limit;
  options.group_cap_per_second = kGroupCap;
  options.latency = kLatency;
  options.record_requests = false;
  options.record_bodies = false;
  options.threads = 256;
  auto stub = std::make_unique<testing::FakeImServer>(options);
  if (!stub->running()) throw BenchFailure("IM stand-in: " + stub->start_error());
  return stub;
}

// The database server's process (its pid file), for its CPU time.
pid_t ServerPid(BenchDatabase& db) {
  auto rows = db.Query("SELECT @@pid_file");
  if (rows.empty() || rows[0].empty()) throw BenchFailure("cannot read @@pid_file");
  std::ifstream in(rows[0][0]);
  long pid = 0;
  if (!(in >> pid) || pid <= 0) throw BenchFailure("cannot read the pid in " + rows[0][0]);
  return static_cast<pid_t>(pid);
}

double CapSeconds(const BenchContext& ctx, const DrainRun& run) {
  if (ctx.recovery_cap_seconds > 0) return ctx.recovery_cap_seconds;
  return std::max(90.0, 4.0 * run.BoundSeconds());
}

DrainRun Drain(const BenchContext& ctx, DrainSpec spec) {
  DrainRun run;
  run.spec = std::move(spec);
  const std::string name = "bench_recovery_" + run.spec.row;
  auto stub = StartAppLimitedStub(run.spec.app_limit);
  BenchDatabase db(ctx.socket, name);
  InsertRoomBacklog(db, run.spec.rooms, run.spec.events, NowMs());
  db.Exec("ANALYZE TABLE room_outbox");
  const pid_t server = ServerPid(db);
  run.cap_seconds = CapSeconds(ctx, run);
  BenchRelayOptions options;
  options.pack_max_events = kPack;
  options.batch_size = kBatch;
  options.requests_per_second = run.spec.app_limit;
  options.app_requests_per_second = run.spec.app_limit;
  const double db_cpu_before = ProcessCpuSeconds(server);
  Stopwatch watch;
  std::vector<std::unique_ptr<BenchRelay>> relays;
  for (size_t k = 0; k < run.spec.relays; ++k) {
    options.node_id = "bench-recovery-" + std::to_string(k);
    relays.push_back(std::make_unique<BenchRelay>(
        ctx.relay_binary, std::filesystem::path(ctx.work_dir) / (name + "_" + std::to_string(k)),
        db, *stub, options));
  }
  for (auto& relay : relays) relay->WaitStarted();
  while ((run.pending_left = db.PendingCount()) > 0 && watch.Seconds() < run.cap_seconds) {
    std::this_thread::sleep_for(kPendingPoll);
  }
  run.seconds = watch.Seconds();
  run.drained = run.pending_left == 0;
  run.db_cpu = ProcessCpuSeconds(server) - db_cpu_before;
  for (auto& relay : relays) {
    run.relay_cpu += relay->CpuSeconds();
    run.relays_ok = relay->Running() && relay->Stop() && run.relays_ok;
  }
  run.im = stub->Stats();
  return run;
}

std::string DrainText(const DrainRun& run) {
  const double per_message =
      run.im.delivered_messages > 0
          ? static_cast<double>(run.im.delivered) / static_cast<double>(run.im.delivered_messages)
          : 0;
  const double messages_per_second = static_cast<double>(run.im.delivered_messages) / run.seconds;
  std::string text =
      (run.drained ? "drained in " + FormatFixed(run.seconds, 1) + " s"
                   : "stopped after " + FormatFixed(run.seconds, 1) + " s, " +
                         FormatCount(static_cast<double>(run.pending_left)) + " of " +
                         FormatCount(static_cast<double>(run.Rows())) + " events left") +
      " (bound " + FormatFixed(run.BoundSeconds(), 1) + " s); " + FormatCount(messages_per_second) +
      " messages/s, " + FormatCount(static_cast<double>(run.im.requests) / run.seconds) +
      " calls/s, " + FormatFixed(per_message, 2) + " events per message; 60007 " +
      FormatCount(static_cast<double>(run.im.app_limited)) + ", MsgFreqCtrl " +
      FormatCount(static_cast<double>(run.im.freq_dropped)) + ", delivered twice " +
      FormatCount(static_cast<double>(run.im.duplicates)) + "; CPU s: relays " +
      FormatFixed(run.relay_cpu, 1) + ", database " + FormatFixed(run.db_cpu, 1);
  return run.relays_ok ? text : text + "; A RELAY EXITED EARLY OR DID NOT STOP";
}

std::string DrainRatio(const DrainRun& run) {
  if (!run.drained) {
    // The rate reached, projected over the whole backlog.
    const double done = static_cast<double>(run.Rows()) - static_cast<double>(run.pending_left);
    if (done <= 0) return "nothing drained";
    const double projected = run.seconds * static_cast<double>(run.Rows()) / done;
    return "about " + FormatRatio(projected, run.BoundSeconds()) + " of the bound (projected)";
  }
  return FormatRatio(run.seconds, run.BoundSeconds()) + " of the bound";
}

std::string How(const DrainSpec& spec) {
  return FormatCount(static_cast<double>(spec.rooms)) + " rooms x " + std::to_string(spec.events) +
         " events, all due; " + std::to_string(spec.relays) + " outbox-relay process" +
         (spec.relays > 1 ? "es" : "") + ", pack_max_events 20, batch_size 100, " +
         "requests_per_second = app_requests_per_second = " + std::to_string(spec.app_limit) +
         ", the rest shipped; IM stand-in: 20 ms round trip, the app limited to " +
         std::to_string(spec.app_limit) + " calls/s (60007 beyond), each group to 40 messages/s";
}

size_t Scaled(const BenchContext& ctx, size_t rooms) {
  return std::max<size_t>(10, static_cast<size_t>(static_cast<double>(rooms) * ctx.recovery_scale));
}

// One claim's rows read (Handler_read_*), its rows given back so the next sees the same backlog.
int64_t RowsReadByOneClaim(relay::MariaDbRelayStore& store, const relay::ClaimOptions& options) {
  const int64_t r0 = Unwrap(store.RowsRead(), "rows read");
  const int64_t r1 = Unwrap(store.RowsRead(), "rows read");
  relay::Claim claim = Unwrap(store.ClaimDue(options), "claim");
  const int64_t r2 = Unwrap(store.RowsRead(), "rows read");
  std::vector<int64_t> ids;
  for (const relay::OutboxRow& row : claim.rows) ids.push_back(row.id);
  (void)Unwrap(store.Release(claim.token, ids), "release");
  return r2 - r1 - (r1 - r0);
}

// Rows read per claim (the median of 5) once every row is listed, for `rooms` rooms x 3 events.
int64_t ClaimCost(const BenchContext& ctx, size_t rooms) {
  BenchDatabase db(ctx.socket, "bench_recovery_claim_" + std::to_string(rooms));
  InsertRoomBacklog(db, rooms, 3, NowMs());
  db.Exec("ANALYZE TABLE room_outbox");
  relay::MariaDbRelayStore store(db.Options());
  relay::ClaimOptions options;
  options.limit = kBatch;
  options.lease_ms = 30000;
  options.rooms.pack_events = kPack;
  // List the whole backlog first: what a claim costs after the arrivals were listed.
  while (Unwrap(store.ClaimDue(options), "listing claim").rows_listed > 0) {
    db.Exec("UPDATE room_outbox SET claim_token = NULL, next_attempt_at_ms = 0");
    db.Exec("UPDATE room_outbox_room SET due_at_ms = 0");
  }
  db.Exec("UPDATE room_outbox SET claim_token = NULL, next_attempt_at_ms = 0");
  db.Exec("UPDATE room_outbox_room SET due_at_ms = 0");
  std::vector<int64_t> costs;
  for (int k = 0; k < 5; ++k) costs.push_back(RowsReadByOneClaim(store, options));
  std::sort(costs.begin(), costs.end());
  return costs[costs.size() / 2];
}

// 17g-17j: the app's limit raised past what this machine can send (kScaleOutLimit), 1 to 4
// relays draining one backlog of one event per room: where the relays stop adding up and what
// holds them (the relays' CPU, the database's).
constexpr int kScaleOutLimit = 20000;

void ScaleOut(const BenchContext& ctx, Report& report) {
  double one_relay = 0;
  const char* rows[] = {"17g", "17h", "17i", "17j"};
  for (size_t relays = 1; relays <= 4; ++relays) {
    const DrainSpec spec{rows[relays - 1], Scaled(ctx, 40000), 1, kScaleOutLimit, relays};
    const DrainRun run = Drain(ctx, spec);
    const double rate = static_cast<double>(run.im.delivered_messages) / run.seconds;
    if (relays == 1) one_relay = rate;
    report.Add({spec.row,
                "Scale-out: " + FormatCount(static_cast<double>(spec.rooms)) +
                    " rooms x 1 event, the app's limit raised to " +
                    FormatCount(static_cast<double>(kScaleOutLimit)) + " calls/s, " +
                    std::to_string(relays) + " relay" + (relays > 1 ? "s" : ""),
                How(spec), DrainText(run), FormatRatio(rate, one_relay) + " of one relay's rate"});
  }
}

}  // namespace

void RunRecovery(const BenchContext& ctx, Report& report) {
  const std::vector<DrainSpec> specs = {
      {"17a", Scaled(ctx, 2000), 3, 300, 1},   {"17b", Scaled(ctx, 40000), 3, 300, 1},
      {"17c", Scaled(ctx, 100000), 3, 300, 1}, {"17d", Scaled(ctx, 30000), 2, 1500, 1},
      {"17e", Scaled(ctx, 30000), 2, 1500, 3},
  };
  for (const DrainSpec& spec : specs) {
    const DrainRun run = Drain(ctx, spec);
    report.Add({spec.row,
                "Drain of " + FormatCount(static_cast<double>(spec.rooms)) + " rooms x " +
                    std::to_string(spec.events) + " events at " + std::to_string(spec.app_limit) +
                    " calls/s, " + std::to_string(spec.relays) + " relay" +
                    (spec.relays > 1 ? "s" : ""),
                How(spec), DrainText(run), DrainRatio(run)});
  }
  ScaleOut(ctx, report);
  const size_t few = Scaled(ctx, 1000);
  const size_t many = Scaled(ctx, 100000);
  const int64_t few_cost = ClaimCost(ctx, few);
  const int64_t many_cost = ClaimCost(ctx, many);
  report.Add({"17f", "Rows read per claim, 100,000 vs 1,000 rooms backlogged",
              "rooms x 3 pending events, every row listed; one ClaimDue of batch 100, pack 20, "
              "its rows given back; Handler_read_* of the store's session, median of 5",
              FormatCount(static_cast<double>(many)) +
                  " rooms: " + FormatCount(static_cast<double>(many_cost)) + " rows read; " +
                  FormatCount(static_cast<double>(few)) +
                  " rooms: " + FormatCount(static_cast<double>(few_cost)),
              FormatRatio(static_cast<double>(many_cost), static_cast<double>(few_cost))});
}

}  // namespace room_outbox::bench
