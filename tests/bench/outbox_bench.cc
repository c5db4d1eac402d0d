// outbox-bench: the benchmarks of `make bench` (scripts/bench.sh starts a private MariaDB and
// runs this). Prints one Markdown report on stdout; progress goes to stderr.
//
//   outbox-bench --socket /path/mysqld.sock --relay-binary build/outbox-relay --work-dir DIR
//                [--only 1,3] [--quick]
//   outbox-bench --socket ... --callgrind-round N   (two worker rounds of N rows, for valgrind:
//                                                    scripts/callgrind-round.sh)
#include <CLI/CLI.hpp>
#include <exception>
#include <functional>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include "bench/bench_support.h"
#include "bench/benchmarks.h"
#include "bench/report.h"
#include "room_outbox/hook.h"

namespace {

using room_outbox::bench::BenchContext;
using room_outbox::bench::Report;

struct Benchmark {
  std::string id;
  std::string title;
  std::function<void(const BenchContext&, Report&)> run;
};

const std::vector<Benchmark>& Benchmarks() {
  static const std::vector<Benchmark> all = {
      {"1", "backlog drain", room_outbox::bench::RunBacklogDrain},
      {"2", "drain under a request budget", room_outbox::bench::RunBudgetedDrain},
      {"3", "hook Commit latency", room_outbox::bench::RunCommitLatency},
      {"4", "claim poll over a large history", room_outbox::bench::RunClaimPoll},
      {"5", "idle relay", room_outbox::bench::RunIdleRelay},
      {"6", "commit -> published latency", room_outbox::bench::RunCommitToPublished},
      {"7", "a busy room beside quiet ones", room_outbox::bench::RunBusyRoom},
      {"8", "claim poll beside a blocked room", room_outbox::bench::RunBlockedRoomClaim},
      {"9", "sync publish inline / background / off", room_outbox::bench::RunSyncModes},
      {"10", "cost per row", room_outbox::bench::RunCostPerRow},
      {"11", "scale-out: relays on one database", room_outbox::bench::RunScaleOut},
      {"12", "the MySQL statement set beside the MariaDB set", room_outbox::bench::RunDialectSets},
      {"13", "a room service with many threads", room_outbox::bench::RunThreadedCommits},
      {"14", "claim poll beside a hot room", room_outbox::bench::RunHotRoomClaim},
      {"15", "a gift storm in one room beside quiet rooms", room_outbox::bench::RunGiftStorm},
      {"16", "packed messages against the app's call limit", room_outbox::bench::RunPackedDrain},
      {"17", "recovery at platform scale", room_outbox::bench::RunRecovery},
  };
  return all;
}

// Smaller sizes for trying the program out; the figures are then not the reference ones.
void MakeQuick(BenchContext& ctx) {
  ctx.drain_rows = 5000;
  ctx.v1_ticks = 3;
  ctx.budget_window = std::chrono::seconds(3);
  ctx.commit_samples = 200;
  ctx.published_rows = 50000;
  ctx.claim_polls = 10;
  ctx.idle_window = std::chrono::seconds(3);
  ctx.latency_commands = 40;
  ctx.busy_room_rows = 200;
  ctx.cost_rows = 2000;
  ctx.scale_rows = 1200;
  ctx.app_limit_rows = 1000;
  ctx.hot_scale_room_rows = 400;
  ctx.hot_scale_rows = 600;
  ctx.thread_commands = 960;
  ctx.pack_room_events = 40;
  ctx.recovery_scale = 0.05;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"room-outbox benchmarks (make bench)"};
  BenchContext ctx;
  ctx.relay_binary = std::string(ROOM_OUTBOX_BINARY_DIR) + "/outbox-relay";
  ctx.work_dir = std::string(ROOM_OUTBOX_BINARY_DIR) + "/bench-work";
  std::vector<std::string> only;
  bool quick = false;
  size_t callgrind_round = 0;
  app.add_option("--socket", ctx.socket, "unix socket of the benchmark's MariaDB")->required();
  app.add_option("--relay-binary", ctx.relay_binary, "the outbox-relay binary (benchmark 5)")
      ->capture_default_str();
  app.add_option("--work-dir", ctx.work_dir, "scratch directory")->capture_default_str();
  app.add_option("--only", only, "run only these benchmarks (1..17)")->delimiter(',');
  app.add_flag("--quick", quick, "small sizes, for trying the program out");
  app.add_option("--drain-rows", ctx.drain_rows, "rows of the backlog drain (benchmark 1)")
      ->capture_default_str();
  app.add_option("--rooms", ctx.rooms, "rooms of the backlog drain")->capture_default_str();
  app.add_option("--recovery-scale", ctx.recovery_scale,
                 "benchmark 17: scale every backlog's rooms by this")
      ->check(CLI::Range(0.001, 10.0));
  app.add_option("--recovery-cap-seconds", ctx.recovery_cap_seconds,
                 "benchmark 17: stop each drain after this many seconds (0: 4 x Tencent's bound)")
      ->check(CLI::Range(0.0, 100000.0));
  app.add_option("--callgrind-round", callgrind_round,
                 "instead of the report: two worker rounds of N rows (benchmark 10, under "
                 "valgrind)");
  CLI11_PARSE(app, argc, argv);
  if (quick) {
    MakeQuick(ctx);
    // Explicit sizes still win over --quick.
    if (app.count("--drain-rows") > 0) ctx.drain_rows = app["--drain-rows"]->as<size_t>();
    if (app.count("--rooms") > 0) ctx.rooms = app["--rooms"]->as<size_t>();
    if (app.count("--recovery-scale") > 0) {
      ctx.recovery_scale = app["--recovery-scale"]->as<double>();
    }
  }
  const std::set<std::string> selected(only.begin(), only.end());

  room_outbox::LibraryInit libraries;
  if (!libraries.status().ok()) {
    std::cerr << "outbox-bench: library init failed\n";
    return 1;
  }

  if (callgrind_round > 0) {
    try {
      return room_outbox::bench::RunCallgrindRounds(ctx, callgrind_round);
    } catch (const std::exception& e) {
      std::cerr << "outbox-bench: FAILED: " << e.what() << std::endl;
      return 1;
    }
  }

  Report report;
  try {
    for (const Benchmark& b : Benchmarks()) {
      if (!selected.empty() && selected.count(b.id) == 0) {
        continue;
      }
      std::cerr << "outbox-bench: " << b.id << ". " << b.title << " ..." << std::endl;
      room_outbox::bench::Stopwatch watch;
      b.run(ctx, report);
      std::cerr << "outbox-bench: " << b.id << ". done in "
                << room_outbox::bench::FormatFixed(watch.Seconds(), 1) << " s" << std::endl;
    }
  } catch (const std::exception& e) {
    std::cout << report.Markdown();
    std::cerr << "outbox-bench: FAILED: " << e.what() << std::endl;
    return 1;
  }
  if (quick) {
    report.AddNote("--quick: reduced sizes; not the reference figures.");
  }
  std::cout << report.Markdown();
  return 0;
}
