#include "bench/commit_floor.h"

#include <algorithm>
#include <array>
#include <memory>
#include <string>
#include <vector>

#include "bench/bench_database.h"
#include "envelope_codec.h"
#include "mysql/connection.h"

namespace room_outbox::bench {
namespace {

constexpr size_t kAllocCommands = 200;

#define FLOOR_NOW_MS "CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED)"
constexpr std::string_view kFloorCommandLog =
    "INSERT INTO room_command_log (command_id, room_id, command_type, request_id, room_seq, "
    "payload, created_at_ms) VALUES (?, ?, ?, ?, ?, ?, " FLOOR_NOW_MS ")";
constexpr std::string_view kFloorOutboxHead =
    "INSERT INTO room_outbox (event_id, event_type, room_id, command_id, request_id, envelope, "
    "status, retry_count, next_attempt_at_ms, claim_token, created_at_ms, updated_at_ms) VALUES ";
constexpr std::string_view kFloorOutboxRow =
    "(?, ?, ?, ?, ?, ?, 'pending', 0, " FLOOR_NOW_MS ", NULL, " FLOOR_NOW_MS ", " FLOOR_NOW_MS ")";
#undef FLOOR_NOW_MS

// Throws when `done` failed; builds no string otherwise, so the floor allocates only what the
// client library does.
void Check(const Result<void>& done, const char* what) {
  if (!done) {
    throw BenchFailure(std::string("floor: ") + what + ": " + done.error().message);
  }
}

// The minimal commit of a command and its events: BEGIN; INSERT the command log row; one
// multi-row INSERT of the outbox rows; COMMIT. Server-side prepared statements over the store's
// connection wrapper (so the same session settings). It writes what the hook writes with the
// sync publish off (the same columns, server-clock times, pending rows due at once without a
// claim token) and checks or reads back nothing.
class FloorTransaction {
 public:
  FloorTransaction(const MysqlOptions& options, size_t rows) {
    conn_ = Unwrap(MariaDbConnection::Connect(options), "floor: connecting");
    std::string insert_rows(kFloorOutboxHead);
    for (size_t i = 0; i < rows; ++i) {
      insert_rows += (i == 0 ? "" : ", ");
      insert_rows += kFloorOutboxRow;
    }
    log_ = Unwrap(conn_->Prepared("floor_command_log", kFloorCommandLog), "floor: prepare log");
    rows_ = Unwrap(conn_->Prepared("floor_outbox_rows", insert_rows), "floor: prepare rows");
  }

  // The statements' values for one command, built before the transaction is timed.
  struct Values {
    std::vector<SqlValue> command;
    std::vector<SqlValue> rows;
  };

  static Values ValuesOf(const CommandWithEvents& c, int64_t occurred_at_ms) {
    const Command& cmd = c.command;
    Values v;
    v.command = {cmd.command_id, cmd.room_id,  cmd.command_type,
                 cmd.request_id, cmd.room_seq, cmd.payload};
    for (const Event& e : c.events) {
      const Envelope envelope{e.event_id,   e.event_type,   cmd.room_id,
                              e.room_seq,   cmd.command_id, cmd.request_id,
                              "bench-node", occurred_at_ms, e.payload};
      std::string json = Unwrap(EncodeEnvelope(envelope), "floor: envelope");
      for (SqlValue value :
           std::array<SqlValue, 6>{e.event_id, e.event_type, cmd.room_id, cmd.command_id,
                                   cmd.request_id, std::move(json)}) {
        v.rows.push_back(std::move(value));
      }
    }
    return v;
  }

  void Run(const Values& v) {
    Check(conn_->Begin(), "BEGIN");
    Check(log_->Execute(v.command), "INSERT room_command_log");
    Check(rows_->Execute(v.rows), "INSERT room_outbox");
    Check(conn_->Commit(), "COMMIT");
  }

 private:
  std::unique_ptr<MariaDbConnection> conn_;
  PreparedStatement* log_ = nullptr;
  PreparedStatement* rows_ = nullptr;
};

AllocFigures SummarizeAllocs(const std::vector<AllocCounts>& counts) {
  AllocFigures out;
  out.commands = counts.size();
  if (counts.empty()) {
    return out;
  }
  out.operator_new_min = out.malloc_min = UINT64_MAX;
  for (const AllocCounts& c : counts) {
    out.operator_new_mean += static_cast<double>(c.operator_new);
    out.malloc_mean += static_cast<double>(c.malloc);
    out.operator_new_min = std::min(out.operator_new_min, c.operator_new);
    out.operator_new_max = std::max(out.operator_new_max, c.operator_new);
    out.malloc_min = std::min(out.malloc_min, c.malloc);
    out.malloc_max = std::max(out.malloc_max, c.malloc);
    out.malloc_counted = out.malloc_counted && c.malloc_counted;
  }
  out.operator_new_mean /= static_cast<double>(counts.size());
  out.malloc_mean /= static_cast<double>(counts.size());
  return out;
}

// One Commit through the hook; throws unless it committed.
void CommitOne(Hook& hook, const CommandWithEvents& c, FloorRun* tally) {
  CommitResult result = hook.Commit(c.command, c.events);
  if (result.status != CommitStatus::kCommitted) {
    throw BenchFailure("sync off: commit failed: " + result.error.message);
  }
  if (tally != nullptr) {
    for (const EventDelivery& d : result.events) {
      (d.state == DeliveryState::kPending ? tally->pending_events : tally->published_events) += 1;
    }
  }
}

}  // namespace

FloorRun RunFloorSideBySide(const BenchContext& ctx, const testing::FakeImServer& stub) {
  BenchDatabase floor_db(ctx.socket, "bench_commit_floor");
  BenchDatabase hook_db(ctx.socket, "bench_commit_sync_off");
  FloorTransaction floor(floor_db.Options(), kBenchEventTypes.size());
  auto hook = MakeBenchHook(hook_db.Options(), stub.ClientOptions(), false);
  FloorRun run;
  std::vector<double> floor_ms;
  std::vector<double> hook_ms;
  const size_t timed_end = kWarmup + ctx.commit_samples;
  for (size_t n = 0; n < timed_end; ++n) {
    const std::string room = "room-" + std::to_string(n);
    const CommandWithEvents f = MakeCommand("floor", n, room, 1);
    const FloorTransaction::Values values = FloorTransaction::ValuesOf(f, NowMs());
    const CommandWithEvents h = MakeCommand("sync-off", n, room, 1);
    const bool timed = n >= kWarmup;
    // Alternate which goes first, so neither always follows the other.
    for (int turn = 0; turn < 2; ++turn) {
      Stopwatch watch;
      if ((turn == 0) == (n % 2 == 0)) {
        floor.Run(values);
        if (timed) floor_ms.push_back(watch.Millis());
      } else {
        CommitOne(*hook, h, timed ? &run : nullptr);
        if (timed) hook_ms.push_back(watch.Millis());
      }
    }
  }
  run.floor = Summarize(floor_ms);
  run.sync_off = Summarize(hook_ms);

  std::vector<AllocCounts> floor_counts;
  std::vector<AllocCounts> hook_counts;
  for (size_t n = timed_end; n < timed_end + kAllocCommands; ++n) {
    const std::string room = "room-" + std::to_string(n);
    const CommandWithEvents f = MakeCommand("floor", n, room, 1);
    const FloorTransaction::Values values = FloorTransaction::ValuesOf(f, NowMs());
    const CommandWithEvents h = MakeCommand("sync-off", n, room, 1);
    {
      AllocWindow window;
      floor.Run(values);
      floor_counts.push_back(window.counts());
    }
    AllocWindow window;
    CommitOne(*hook, h, nullptr);
    hook_counts.push_back(window.counts());
  }
  run.floor_allocs = SummarizeAllocs(floor_counts);
  run.commit_allocs = SummarizeAllocs(hook_counts);
  return run;
}

}  // namespace room_outbox::bench
