// Benchmark 7: a backlog where one room holds half the rows. That room is sent at its pace
// (room_min_interval); the other rooms' rows should drain about as fast as without it.
#include <string>
#include <thread>

#include "bench/bench_database.h"
#include "bench/benchmarks.h"
#include "bench/worker_harness.h"

namespace room_outbox::bench {
namespace {

using std::chrono::milliseconds;

constexpr size_t kQuietRooms = 100;
constexpr std::chrono::seconds kLimit{600};

struct BusyRun {
  size_t quiet_rows = 0;
  size_t busy_rows = 0;
  double quiet_seconds = 0;         // until every quiet row was published
  int64_t busy_published_then = 0;  // busy rows published at that moment
  double busy_seconds = 0;          // until every busy row was published (0: none)
};

int64_t Count(BenchDatabase& db, const std::string& where) {
  return db.Scalar("SELECT COUNT(*) FROM room_outbox WHERE " + where);
}

// The worker's daemon loop with the shipped defaults over `rows` rows, every `busy_every`-th of
// them in the busy room (0: none).
BusyRun RunBusyBacklog(const BenchContext& ctx, const std::string& name, size_t rows,
                       size_t busy_every, const TencentImOptions& im) {
  BenchDatabase db(ctx.socket, name);
  OutboxFill fill;
  fill.rows = rows;
  fill.rooms = kQuietRooms;
  fill.id_prefix = name;
  fill.created_at_ms = NowMs();
  fill.busy_every = busy_every;
  InsertPendingRows(db, fill);
  const std::string busy = "room_id = " + db.Quote(kBusyRoomId);
  BusyRun run;
  run.busy_rows = static_cast<size_t>(Count(db, busy));
  run.quiet_rows = rows - run.busy_rows;

  WorkerHarness harness(db.Options(), im, DefaultWorkerOptions());
  Stopwatch watch;
  harness.Start();
  const std::string quiet_pending = "status = 'pending' AND NOT (" + busy + ")";
  while (Count(db, quiet_pending) > 0 && watch.Seconds() < kLimit.count()) {
    std::this_thread::sleep_for(milliseconds(20));
  }
  run.quiet_seconds = watch.Seconds();
  run.busy_published_then = Count(db, "status = 'published' AND " + busy);
  if (run.busy_rows > 0) {
    while (db.PendingCount() > 0 && watch.Seconds() < kLimit.count()) {
      std::this_thread::sleep_for(milliseconds(20));
    }
    run.busy_seconds = watch.Seconds();
  }
  harness.Stop();
  if (db.PendingCount() > 0) {
    throw BenchFailure(name + ": rows still pending after " + std::to_string(kLimit.count()) +
                       " s");
  }
  return run;
}

}  // namespace

void RunBusyRoom(const BenchContext& ctx, Report& report) {
  auto stub = StartStub(milliseconds(0));
  const TencentImOptions im = stub->ClientOptions();  // requests_per_second = 0
  const relay::WorkerOptions defaults = DefaultWorkerOptions();
  const size_t quiet = ctx.busy_room_rows;
  const BusyRun alone = RunBusyBacklog(ctx, "bench_busy_alone", quiet, 0, im);
  const BusyRun beside = RunBusyBacklog(ctx, "bench_busy_beside", 2 * quiet, 2, im);

  const double pace_floor = static_cast<double>(beside.busy_rows) *
                            static_cast<double>(defaults.room_min_interval.count()) / 1000.0;
  const std::string settings = DescribeSettings(defaults, 0) + " (worker defaults; budget off)";
  report.Add({"7a",
              "Busy room: " + FormatCount(static_cast<double>(alone.quiet_rows)) + " rows over " +
                  std::to_string(kQuietRooms) + " rooms alone, until all are published",
              settings, FormatFixed(alone.quiet_seconds, 2) + " s", "x1"});
  report.Add({"7b",
              "the same rooms' " + FormatCount(static_cast<double>(beside.quiet_rows)) +
                  " rows interleaved with " + FormatCount(static_cast<double>(beside.busy_rows)) +
                  " rows of one busy room, until the other rooms' rows are published",
              settings,
              FormatFixed(beside.quiet_seconds, 2) + " s (busy room then " +
                  FormatCount(static_cast<double>(beside.busy_published_then)) + " rows sent)",
              FormatRatio(beside.quiet_seconds, alone.quiet_seconds) + " vs 7a"});
  report.Add({"7c", "the busy room's rows, until all are published", settings,
              FormatFixed(beside.busy_seconds, 2) + " s; its pace allows " +
                  FormatFixed(pace_floor, 1) + " s",
              FormatRatio(beside.busy_seconds, pace_floor) + " of its pace"});
}

}  // namespace room_outbox::bench
