// Benchmark rows 3e-3g: the hook's Commit with the sync publish off beside the database's floor
// for the same rows, and the heap allocations of one Commit (item 5).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "bench/alloc_counter.h"
#include "bench/bench_support.h"
#include "bench/commit_support.h"
#include "support/fake_im_server.h"

namespace room_outbox::core {
class MariaDbConnection;
class PreparedStatement;
}  // namespace room_outbox::core

namespace room_outbox::bench {

// The minimal commit of a command and its events: BEGIN; INSERT the command log row; one
// multi-row INSERT of the outbox rows; COMMIT. Server-side prepared statements over the store's
// connection wrapper (so the same session settings). It writes what the hook writes with the
// sync publish off (the same columns, server-clock times, pending rows due at once without a
// claim token) and checks or reads back nothing. One connection; one thread at a time.
class FloorTransaction {
 public:
  // Connects and prepares the statements for commands of `rows` events; throws BenchFailure.
  FloorTransaction(const MysqlOptions& options, size_t rows);
  ~FloorTransaction();
  FloorTransaction(const FloorTransaction&) = delete;
  FloorTransaction& operator=(const FloorTransaction&) = delete;

  // The statements' values for one command, built before the transaction is timed.
  struct Values {
    std::vector<SqlValue> command;
    std::vector<SqlValue> rows;
  };
  static Values ValuesOf(const CommandWithEvents& c, int64_t occurred_at_ms);

  // Commits one command; throws BenchFailure when a statement fails.
  void Run(const Values& v);

 private:
  std::unique_ptr<core::MariaDbConnection> conn_;
  core::PreparedStatement* log_ = nullptr;
  core::PreparedStatement* rows_ = nullptr;
};

// Allocations per command over a number of commands (alloc_counter.h says what is counted).
struct AllocFigures {
  size_t commands = 0;
  double operator_new_mean = 0;
  uint64_t operator_new_min = 0;
  uint64_t operator_new_max = 0;
  double malloc_mean = 0;
  uint64_t malloc_min = 0;
  uint64_t malloc_max = 0;
  bool malloc_counted = true;
};

struct FloorRun {
  Latency floor;     // the hand-written transaction
  Latency store;     // MariaDbHookStore::CommitCommand alone, with what the hook hands it
  Latency sync_off;  // Hook::Commit, sync publish off
  // The median over the commands of (this command's time / the floor's time for the command
  // staged with it): steadier than a ratio of two p50s when load from elsewhere comes in bursts.
  double store_paired_ratio = 0;
  double sync_off_paired_ratio = 0;
  size_t published_events = 0;
  size_t pending_events = 0;
  AllocFigures floor_allocs;
  AllocFigures store_allocs;
  AllocFigures commit_allocs;
};

// ctx.commit_samples commands through each path (the floor, the store alone, the hook),
// interleaved one by one (after kWarmup untimed rounds) so that load from elsewhere on the
// machine falls on all alike; each path on its own database of the same server, each command in
// a new room. Then 200 more commands through each path with their allocations counted
// (untimed). `stub` is never called (sync off).
FloorRun RunFloorSideBySide(const BenchContext& ctx, const testing::FakeImServer& stub);

}  // namespace room_outbox::bench
