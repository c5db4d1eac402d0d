// Benchmark 10: what a published row costs the relay. The real outbox-relay process drains a
// backlog against an instant stub (CPU from /proc, wall time, statements at the server), and
// one worker round in-process is the unit that scripts/callgrind-round.sh counts instructions
// of under valgrind.
#include <iostream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_database.h"
#include "bench/bench_relay.h"
#include "bench/benchmarks.h"
#include "bench/worker_harness.h"

namespace room_outbox::bench {
namespace {

using std::chrono::milliseconds;

constexpr milliseconds kDrainLimit{300000};
constexpr milliseconds kPendingPoll{20};

struct CostVariant {
  std::string id;
  std::string name;  // database and directory suffix
  std::string settings;
  BenchRelayOptions options;
};

struct CostRun {
  size_t rows = 0;
  size_t published = 0;  // rows the database holds as published at the end
  double cpu_seconds = 0;
  double wall_seconds = 0;
  int64_t statements = 0;  // at the server during the drain, the benchmark's own subtracted
  testing::FakeImStats im;
  bool exited_cleanly = true;
  double CpuPer10k() const {
    return published > 0 ? cpu_seconds * 10000.0 / static_cast<double>(published) : 0;
  }
  double Rate() const {
    return wall_seconds > 0 ? static_cast<double>(published) / wall_seconds : 0;
  }
};

int64_t ServerQuestions(BenchDatabase& db) {
  return std::stoll(db.Query("SHOW GLOBAL STATUS LIKE 'Questions'").at(0).at(1));
}

std::vector<CostVariant> Variants() {
  BenchRelayOptions shipped;
  shipped.node_id = "bench-cost-shipped";
  BenchRelayOptions unbudgeted = shipped;
  unbudgeted.node_id = "bench-cost-nobudget";
  unbudgeted.requests_per_second = 0;
  BenchRelayOptions unshared = shipped;
  unshared.node_id = "bench-cost-unshared";
  unshared.app_requests_per_second = 0;
  BenchRelayOptions unpaced = unbudgeted;
  unpaced.node_id = "bench-cost-nopace";
  unpaced.room_min_interval = milliseconds(0);
  return {
      {"10a", "shipped",
       "shipped defaults (requests_per_second=200, room_min_interval=" + ShippedRoomMinInterval() +
           ")",
       shipped},
      {"10b", "nobudget", "defaults, budget off (requests_per_second=0)", unbudgeted},
      {"10c", "nopace", "defaults, budget off, pace off (room_min_interval=0ms)", unpaced},
      {"10f", "unshared",
       "defaults, the budget not shared (app_requests_per_second=0: the process's own 200/s)",
       unshared},
  };
}

// Starts a relay on a fresh backlog and waits until the database holds every row published;
// the CPU time is read before the relay is stopped.
CostRun RunRelayDrain(const BenchContext& ctx, const CostVariant& variant) {
  auto stub = StartStub(milliseconds(0));
  BenchDatabase db(ctx.socket, "bench_cost_" + variant.name);
  OutboxFill fill;
  fill.rows = ctx.cost_rows;
  fill.rooms = ctx.rooms;
  fill.id_prefix = "cost-" + variant.name;
  fill.created_at_ms = NowMs();
  InsertPendingRows(db, fill);
  CostRun run;
  run.rows = ctx.cost_rows;
  int64_t own_statements = 2;  // the two SHOW GLOBAL STATUS
  const int64_t questions_start = ServerQuestions(db);
  Stopwatch watch;
  BenchRelay relay(ctx.relay_binary, std::filesystem::path(ctx.work_dir) / ("cost-" + variant.name),
                   db, *stub, variant.options);
  relay.WaitStarted();
  while (relay.Running() && watch.Millis() < static_cast<double>(kDrainLimit.count())) {
    ++own_statements;
    if (db.PendingCount() == 0) {
      break;
    }
    std::this_thread::sleep_for(kPendingPoll);
  }
  run.wall_seconds = watch.Seconds();
  run.cpu_seconds = relay.CpuSeconds();
  run.statements = ServerQuestions(db) - questions_start - own_statements;
  run.exited_cleanly = relay.Running() && relay.Stop();
  run.published =
      static_cast<size_t>(db.Scalar("SELECT COUNT(*) FROM room_outbox WHERE status = 'published'"));
  run.im = stub->Stats();
  return run;
}

std::string CostText(const CostRun& run) {
  const double rows = static_cast<double>(run.published);
  std::string text =
      "CPU " + FormatFixed(run.CpuPer10k(), 3) + " s per 10k rows (utime+stime; " +
      FormatFixed(run.cpu_seconds, 3) + " s in all, " +
      FormatFixed(run.wall_seconds > 0 ? 100.0 * run.cpu_seconds / run.wall_seconds : 0, 0) +
      "% of one core); wall " + FormatFixed(run.wall_seconds, 2) + " s, " +
      FormatCount(run.Rate()) + " rows/s; " +
      FormatFixed(rows > 0 ? 100.0 * static_cast<double>(run.statements) / rows : 0, 1) +
      " statements per 100 rows; IM delivered " +
      FormatCount(static_cast<double>(run.im.delivered)) + ", duplicates " +
      std::to_string(run.im.duplicates);
  if (run.published != run.rows) {
    text += "; INCOMPLETE: " + FormatCount(rows) + " of " +
            FormatCount(static_cast<double>(run.rows)) + " published";
  }
  return run.exited_cleanly ? text : text + "; RELAY EXITED EARLY OR DID NOT STOP";
}

// The functions scripts/callgrind-round.sh toggles collection on (--toggle-collect, one per
// valgrind run): one round each, nothing else. Never inlined, so valgrind sees their entry and
// exit; the different asm comments keep the compiler from folding the two into one.
__attribute__((noinline)) relay::RoundResult CallgrindColdRound(WorkerHarness& harness) {
  relay::RoundResult result = harness.worker().RunRound();
  asm volatile("# cold round" ::: "memory");
  return result;
}

__attribute__((noinline)) relay::RoundResult CallgrindWarmRound(WorkerHarness& harness) {
  relay::RoundResult result = harness.worker().RunRound();
  asm volatile("# warm round" ::: "memory");
  return result;
}

void PrintRound(const char* name, const relay::RoundResult& result) {
  std::cout << "round=" << name << " claimed=" << result.claim.claimed
            << " published=" << result.marks.published << " failed=" << result.marks.failed
            << " released=" << result.marks.released << " waves=" << result.sent.waves << std::endl;
}

}  // namespace

void RunCostPerRow(const BenchContext& ctx, Report& report) {
  const std::vector<CostVariant> variants = Variants();
  std::vector<CostRun> runs;
  for (const CostVariant& variant : variants) {
    runs.push_back(RunRelayDrain(ctx, variant));
  }
  const std::string what = "Cost per row: outbox-relay process (" + ctx.relay_binary +
                           ") draining " + FormatCount(static_cast<double>(ctx.cost_rows)) +
                           " rows over " + std::to_string(ctx.rooms) + " rooms, instant stub";
  for (size_t i = 0; i < variants.size(); ++i) {
    report.Add(
        {variants[i].id, i == 0 ? what : "same, " + variants[i].settings,
         variants[i].settings + "; other keys shipped defaults; log level info", CostText(runs[i]),
         i == 0 ? "x1 (CPU per row)"
                : FormatRatio(runs[i].CpuPer10k(), runs[0].CpuPer10k()) + " CPU per row vs 10a"});
  }
  report.AddNote(
      "10: CPU is the relay process's utime+stime from /proc from its start (config, connect) "
      "until the database holds every row published; the MariaDB server's own CPU is not in "
      "it. Statements are the server's Questions counter over the drain minus the benchmark's "
      "own. Instructions per row of one worker round (rows 10d, 10e) come from "
      "scripts/callgrind-round.sh when valgrind is installed.");
}

int RunCallgrindRounds(const BenchContext& ctx, size_t rows_per_round) {
  auto stub = StartStub(milliseconds(0));
  BenchDatabase db(ctx.socket, "bench_cost_callgrind");
  OutboxFill fill;
  fill.rows = 2 * rows_per_round;
  fill.rooms = 100000;  // nearly one row per room: no pace wait inside a round
  fill.id_prefix = "cost-callgrind";
  fill.created_at_ms = NowMs();
  InsertPendingRows(db, fill);
  relay::WorkerOptions options = DefaultWorkerOptions();
  options.batch_size = rows_per_round;
  // Under valgrind everything runs tens of times slower; generous bounds keep every row sent.
  options.publish_timeout = milliseconds(30000);
  options.lease = milliseconds(120000);
  WorkerHarness harness(db.Options(), stub->ClientOptions(), options);
  // The first round also prepares the statements, opens the IM connections and signs the
  // UserSig; the second finds them ready.
  const relay::RoundResult cold = CallgrindColdRound(harness);
  const relay::RoundResult warm = CallgrindWarmRound(harness);
  PrintRound("cold", cold);
  PrintRound("warm", warm);
  const int status =
      cold.marks.published == rows_per_round && warm.marks.published == rows_per_round ? 0 : 1;
  const testing::FakeImStats im = stub->Stats();
  std::cout << "im_delivered=" << im.delivered << " im_duplicates=" << im.duplicates << std::endl;
  return status;
}

}  // namespace room_outbox::bench
