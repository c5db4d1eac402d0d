// Benchmark 13: a room service with many threads. Commits per second with 1, 4 and 16 threads,
// each thread with its own Hook (sync publish off, so the row measures the commit) on rooms of
// its own, beside the floor transaction (commit_floor.h) with one connection per thread, at
// innodb_flush_log_at_trx_commit 1 (durable, production) and 2.
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <latch>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_database.h"
#include "bench/benchmarks.h"
#include "bench/commit_floor.h"
#include "bench/commit_support.h"
#include "room_outbox/hook.h"
#include "support/fake_im_server.h"

namespace room_outbox::bench {
namespace {

constexpr size_t kRoomsPerThread = 10;
constexpr size_t kWarmupPerThread = 20;
// The timed commands of each path are run in this many rounds, the floor and the hook taking
// turns to go first, so that load from elsewhere on the machine falls on both alike.
constexpr size_t kRounds = 10;
constexpr size_t kThreadCounts[] = {1, 4, 16};

// Command n of thread `t`: rooms "<prefix>-t<t>-room-<k>" owned by that thread alone, each
// room's commands in order (room_seq 1, 2, ...).
CommandWithEvents ThreadCommand(const std::string& prefix, size_t t, size_t n) {
  const std::string id_prefix = prefix + "-t" + std::to_string(t);
  const std::string room = id_prefix + "-room-" + std::to_string(n % kRoomsPerThread);
  return MakeCommand(id_prefix, n, room, static_cast<int64_t>(n / kRoomsPerThread + 1));
}

// Wall-clock seconds of a run, this process's CPU seconds over it (user + system, every
// thread: the client side) and the server's (mariadbd's, when its pid file is found).
struct Span {
  double wall = 0;
  double cpu = 0;
  double server_cpu = 0;
  Span& operator+=(const Span& other) {
    wall += other.wall;
    cpu += other.cpu;
    server_cpu += other.server_cpu;
    return *this;
  }
};

// The private server's CPU seconds so far (utime + stime of /proc/<pid>/stat), its pid read
// from the mysqld.pid that scripts/mariadb-local.sh writes beside the socket; -1 when unknown.
double ServerCpuSeconds(const std::string& socket) {
  const std::filesystem::path pid_file = std::filesystem::path(socket).parent_path() / "mysqld.pid";
  std::ifstream pid_in(pid_file);
  long pid = 0;
  if (!(pid_in >> pid) || pid <= 0) {
    return -1;
  }
  std::ifstream stat_in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(stat_in)), std::istreambuf_iterator<char>());
  const size_t after_name = stat.rfind(')');
  if (after_name == std::string::npos) {
    return -1;
  }
  std::istringstream fields(stat.substr(after_name + 2));
  std::string field;
  double ticks = 0;
  for (int k = 3; k <= 15 && fields >> field; ++k) {
    if (k == 14 || k == 15) {  // utime, stime
      ticks += std::stod(field);
    }
  }
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

double ProcessCpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const auto seconds = [](const timeval& tv) {
    return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6;
  };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

// Runs `commit(t, n)` for n in [first, first + count) on each of `threads` threads at once and
// returns the wall-clock time from their common start to the last one's end, and the process's
// CPU time over it. A failure in a thread is rethrown here once every thread has stopped.
template <class Commit>
Span RunParallel(const std::string& socket, size_t threads, size_t first, size_t count,
                 const Commit& commit) {
  std::latch ready(static_cast<std::ptrdiff_t>(threads));
  std::latch go(1);
  std::mutex failure_mutex;
  std::exception_ptr failure;
  std::vector<std::thread> running;
  for (size_t t = 0; t < threads; ++t) {
    running.emplace_back([&, t] {
      ready.count_down();
      go.wait();
      try {
        for (size_t n = first; n < first + count; ++n) {
          commit(t, n);
        }
      } catch (...) {
        std::lock_guard lock(failure_mutex);
        failure = std::current_exception();
      }
    });
  }
  ready.wait();
  const double cpu_before = ProcessCpuSeconds();
  const double server_before = ServerCpuSeconds(socket);
  Stopwatch watch;
  go.count_down();
  for (std::thread& thread : running) {
    thread.join();
  }
  const double wall = watch.Seconds();
  const double server_after = ServerCpuSeconds(socket);
  const Span span{wall, ProcessCpuSeconds() - cpu_before,
                  server_before < 0 || server_after < 0 ? -1e9 : server_after - server_before};
  if (failure) {
    std::rethrow_exception(failure);
  }
  return span;
}

// One path's per-thread state, staged before anything is timed.
class FloorPath {
 public:
  FloorPath(const BenchDatabase& db, const std::string& prefix, size_t threads, size_t commands) {
    for (size_t t = 0; t < threads; ++t) {
      floors_.push_back(std::make_unique<FloorTransaction>(db.Options(), kBenchEventTypes.size()));
      values_.emplace_back();
      for (size_t n = 0; n < commands; ++n) {
        values_[t].push_back(FloorTransaction::ValuesOf(ThreadCommand(prefix, t, n), NowMs()));
      }
    }
  }
  void operator()(size_t t, size_t n) const { floors_[t]->Run(values_[t][n]); }

 private:
  std::vector<std::unique_ptr<FloorTransaction>> floors_;
  std::vector<std::vector<FloorTransaction::Values>> values_;
};

class HookPath {
 public:
  HookPath(const BenchDatabase& db, const testing::FakeImServer& stub, const std::string& prefix,
           size_t threads, size_t commands) {
    for (size_t t = 0; t < threads; ++t) {
      hooks_.push_back(MakeBenchHook(db.Options(), stub.ClientOptions(), SyncPublishMode::kOff));
      commands_.emplace_back();
      for (size_t n = 0; n < commands; ++n) {
        commands_[t].push_back(ThreadCommand(prefix, t, n));
      }
    }
  }
  void operator()(size_t t, size_t n) const {
    const CommandWithEvents& c = commands_[t][n];
    CommitResult result = hooks_[t]->Commit(c.command, c.events);
    if (result.status != CommitStatus::kCommitted) {
      throw BenchFailure("threads: hook commit failed: " + result.error.message);
    }
  }

 private:
  std::vector<std::unique_ptr<Hook>> hooks_;
  std::vector<std::vector<CommandWithEvents>> commands_;
};

struct PathFigures {
  double commits_per_second = 0;
  double cpu_us_per_commit = 0;          // the benchmark process's CPU (the client side)
  double server_cpu_us_per_commit = -1;  // mariadbd's; < 0 when unknown
};

struct Rates {
  PathFigures floor;
  PathFigures hook;
  // The median over the rounds of (the hook's rate / the floor's rate in the same round):
  // steadier than the ratio of the totals when load from elsewhere comes in bursts.
  double paired_ratio = 0;
};

PathFigures FiguresOf(const Span& span, double commits) {
  return PathFigures{commits / span.wall, span.cpu * 1e6 / commits,
                     span.server_cpu < 0 ? -1 : span.server_cpu * 1e6 / commits};
}

// Both paths at `threads` threads: a warm-up, then kRounds rounds taking turns.
Rates MeasureAt(const BenchContext& ctx, BenchDatabase& floor_db, BenchDatabase& hook_db,
                const testing::FakeImServer& stub, const std::string& prefix, size_t threads) {
  const size_t per_round = std::max<size_t>(1, ctx.thread_commands / threads / kRounds);
  const size_t commands = kWarmupPerThread + per_round * kRounds;
  const FloorPath floor(floor_db, prefix, threads, commands);
  const HookPath hook(hook_db, stub, prefix, threads, commands);
  RunParallel(ctx.socket, threads, 0, kWarmupPerThread, floor);
  RunParallel(ctx.socket, threads, 0, kWarmupPerThread, hook);
  Span floor_span;
  Span hook_span;
  std::vector<double> ratios;
  for (size_t round = 0; round < kRounds; ++round) {
    const size_t first = kWarmupPerThread + round * per_round;
    Span floor_round;
    Span hook_round;
    if (round % 2 == 0) {
      floor_round = RunParallel(ctx.socket, threads, first, per_round, floor);
      hook_round = RunParallel(ctx.socket, threads, first, per_round, hook);
    } else {
      hook_round = RunParallel(ctx.socket, threads, first, per_round, hook);
      floor_round = RunParallel(ctx.socket, threads, first, per_round, floor);
    }
    ratios.push_back(floor_round.wall / hook_round.wall);  // same commits: rate ratio
    floor_span += floor_round;
    hook_span += hook_round;
  }
  const auto timed = static_cast<double>(threads * per_round * kRounds);
  return Rates{FiguresOf(floor_span, timed), FiguresOf(hook_span, timed), Percentile(ratios, 50)};
}

// Sets innodb_flush_log_at_trx_commit on the server and returns the value read back.
int64_t SetFlush(BenchDatabase& db, int64_t value) {
  db.Exec("SET GLOBAL innodb_flush_log_at_trx_commit = " + std::to_string(value));
  return db.Scalar("SELECT @@GLOBAL.innodb_flush_log_at_trx_commit");
}

void AddRows(Report& report, char& id, size_t threads, int64_t flush, const Rates& rates,
             size_t commands) {
  const std::string floor_id = std::string("13") + id++;
  const std::string hook_id = std::string("13") + id++;
  const std::string common =
      std::to_string(threads) + (threads == 1 ? " thread" : " threads") +
      " on rooms of their own (" + std::to_string(kRoomsPerThread) +
      " each), 1 command + 3 events, " + FormatCount(static_cast<double>(commands)) +
      " timed commits, innodb_flush_log_at_trx_commit=" + std::to_string(flush) + " (read back)";
  const auto result = [](const PathFigures& f) {
    return FormatCount(f.commits_per_second) + " commits/s; CPU per commit: client " +
           FormatFixed(f.cpu_us_per_commit, 0) + " us, server " +
           (f.server_cpu_us_per_commit < 0 ? std::string("n/a")
                                           : FormatFixed(f.server_cpu_us_per_commit, 0) + " us");
  };
  report.Add({floor_id, "commits/s, floor transaction", common + ", one connection per thread",
              result(rates.floor), ""});
  report.Add({hook_id, "commits/s, Hook::Commit", common + ", one Hook per thread, sync off",
              result(rates.hook),
              "x" + FormatFixed(rates.hook.commits_per_second / rates.floor.commits_per_second, 2) +
                  " vs " + floor_id + " (median of " + std::to_string(kRounds) +
                  " paired rounds x" + FormatFixed(rates.paired_ratio, 2) + ")"});
}

}  // namespace

void RunThreadedCommits(const BenchContext& ctx, Report& report) {
  BenchDatabase floor_db(ctx.socket, "bench_threads_floor");
  BenchDatabase hook_db(ctx.socket, "bench_threads_hook");
  auto stub = StartStub(std::chrono::milliseconds(0));  // never called: sync publish off
  const int64_t original = floor_db.Scalar("SELECT @@GLOBAL.innodb_flush_log_at_trx_commit");
  char id = 'a';
  try {
    for (const int64_t wanted : {1, 2}) {
      const int64_t flush = SetFlush(floor_db, wanted);
      for (const size_t threads : kThreadCounts) {
        const std::string prefix = "f" + std::to_string(wanted) + "n" + std::to_string(threads);
        const Rates rates = MeasureAt(ctx, floor_db, hook_db, *stub, prefix, threads);
        const size_t per_round = std::max<size_t>(1, ctx.thread_commands / threads / kRounds);
        AddRows(report, id, threads, flush, rates, threads * per_round * kRounds);
      }
    }
  } catch (...) {
    SetFlush(floor_db, original);
    throw;
  }
  const int64_t restored = SetFlush(floor_db, original);
  report.AddNote(
      "13: innodb_flush_log_at_trx_commit set with SET GLOBAL for 13a-13f (1) and "
      "13g-13l (2), then restored to " +
      std::to_string(restored) + "; goal: 16 threads at 1 (13f vs 13e) >= x0.85.");
}

}  // namespace room_outbox::bench
