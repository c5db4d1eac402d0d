#include "bench/commit_floor.h"

#include <algorithm>
#include <array>
#include <memory>
#include <string>
#include <vector>

#include "bench/bench_database.h"
#include "core/envelope_codec.h"
#include "core/mysql/connection.h"
#include "store/mariadb_hook_store.h"

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
void Check(const core::Result<void>& done, const char* what) {
  if (!done) {
    throw BenchFailure(std::string("floor: ") + what + ": " + done.error().message);
  }
}

}  // namespace

FloorTransaction::FloorTransaction(const MysqlOptions& options, size_t rows) {
  conn_ = Unwrap(core::MariaDbConnection::Connect(options), "floor: connecting");
  std::string insert_rows(kFloorOutboxHead);
  for (size_t i = 0; i < rows; ++i) {
    insert_rows += (i == 0 ? "" : ", ");
    insert_rows += kFloorOutboxRow;
  }
  log_ = Unwrap(conn_->Prepared("floor_command_log", kFloorCommandLog), "floor: prepare log");
  rows_ = Unwrap(conn_->Prepared("floor_outbox_rows", insert_rows), "floor: prepare rows");
}

FloorTransaction::~FloorTransaction() = default;

FloorTransaction::Values FloorTransaction::ValuesOf(const CommandWithEvents& c,
                                                    int64_t occurred_at_ms) {
  const Command& cmd = c.command;
  Values v;
  v.command = {cmd.command_id, cmd.room_id,  cmd.command_type,
               cmd.request_id, cmd.room_seq, cmd.payload};
  for (const Event& e : c.events) {
    const Envelope envelope{e.event_id,   e.event_type,   cmd.room_id,
                            e.room_seq,   cmd.command_id, cmd.request_id,
                            "bench-node", occurred_at_ms, e.payload};
    std::string json = Unwrap(core::EncodeEnvelope(envelope), "floor: envelope");
    for (core::SqlValue value :
         std::array<core::SqlValue, 6>{e.event_id, e.event_type, cmd.room_id, cmd.command_id,
                                       cmd.request_id, std::move(json)}) {
      v.rows.push_back(std::move(value));
    }
  }
  return v;
}

void FloorTransaction::Run(const Values& v) {
  Check(conn_->Begin(), "BEGIN");
  Check(log_->Execute(v.command), "INSERT room_command_log");
  Check(rows_->Execute(v.rows), "INSERT room_outbox");
  Check(conn_->Commit(), "COMMIT");
}

namespace {

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

// The median of ms[i] / base[i].
double PairedRatio(const std::vector<double>& ms, const std::vector<double>& base) {
  std::vector<double> ratios;
  for (size_t i = 0; i < ms.size() && i < base.size(); ++i) {
    if (base[i] > 0) {
      ratios.push_back(ms[i] / base[i]);
    }
  }
  return Percentile(ratios, 50);
}

// The three paths of one run, each on its own database, and what one command takes on each.
class SideBySide {
 public:
  enum Path { kFloor = 0, kStore = 1, kHook = 2 };

  SideBySide(const BenchContext& ctx, const testing::FakeImServer& stub)
      : floor_db_(ctx.socket, "bench_commit_floor"),
        store_db_(ctx.socket, "bench_commit_store"),
        hook_db_(ctx.socket, "bench_commit_sync_off"),
        floor_(floor_db_.Options(), kBenchEventTypes.size()),
        store_(internal::MakeMariaDbHookStore(store_db_.Options())),
        hook_(MakeBenchHook(hook_db_.Options(), stub.ClientOptions(), SyncPublishMode::kOff)) {}

  // Command n's inputs for every path, built before anything is timed.
  void Stage(size_t n) {
    const std::string room = "room-" + std::to_string(n);
    values_ = FloorTransaction::ValuesOf(MakeCommand("floor", n, room, 1), NowMs());
    request_ = StoreRequest(MakeCommand("store", n, room, 1));
    hook_command_ = MakeCommand("sync-off", n, room, 1);
  }

  void Run(Path path, FloorRun* tally) {
    switch (path) {
      case kFloor:
        floor_.Run(values_);
        break;
      case kStore:
        if (auto w = store_->CommitCommand(request_, {}); !w) {
          throw BenchFailure("store: commit failed: " + w.error().message);
        }
        break;
      case kHook:
        CommitOne(*hook_, hook_command_, tally);
        break;
    }
  }

 private:
  // What the hook hands the store with the sync publish off: no token, no lease, the envelopes
  // encoded, per-room order asked for.
  static internal::CommitRequest StoreRequest(const CommandWithEvents& c) {
    internal::CommitRequest request;
    request.command = c.command;
    request.check_earlier_pending = true;
    const FloorTransaction::Values v = FloorTransaction::ValuesOf(c, NowMs());
    for (size_t k = 0; k < c.events.size(); ++k) {
      const Event& e = c.events[k];
      request.rows.push_back(internal::NewOutboxRow{
          e.event_id, e.event_type, c.command.room_id, c.command.command_id, c.command.request_id,
          std::get<std::string>(v.rows[k * 6 + 5]), false});
    }
    return request;
  }

  BenchDatabase floor_db_;
  BenchDatabase store_db_;
  BenchDatabase hook_db_;
  FloorTransaction floor_;
  std::unique_ptr<internal::MariaDbHookStore> store_;
  std::unique_ptr<Hook> hook_;
  FloorTransaction::Values values_;
  internal::CommitRequest request_;
  CommandWithEvents hook_command_;
};

}  // namespace

FloorRun RunFloorSideBySide(const BenchContext& ctx, const testing::FakeImServer& stub) {
  SideBySide paths(ctx, stub);
  FloorRun run;
  std::array<std::vector<double>, 3> ms;
  const size_t timed_end = kWarmup + ctx.commit_samples;
  for (size_t n = 0; n < timed_end; ++n) {
    paths.Stage(n);
    const bool timed = n >= kWarmup;
    // Rotate which goes first, so no path always follows the same one.
    for (size_t turn = 0; turn < 3; ++turn) {
      const auto path = static_cast<SideBySide::Path>((n + turn) % 3);
      Stopwatch watch;
      paths.Run(path, timed ? &run : nullptr);
      if (timed) ms[path].push_back(watch.Millis());
    }
  }
  run.store_paired_ratio = PairedRatio(ms[SideBySide::kStore], ms[SideBySide::kFloor]);
  run.sync_off_paired_ratio = PairedRatio(ms[SideBySide::kHook], ms[SideBySide::kFloor]);
  run.floor = Summarize(ms[SideBySide::kFloor]);
  run.store = Summarize(ms[SideBySide::kStore]);
  run.sync_off = Summarize(ms[SideBySide::kHook]);

  std::array<std::vector<AllocCounts>, 3> counts;
  for (size_t n = timed_end; n < timed_end + kAllocCommands; ++n) {
    paths.Stage(n);
    for (const auto path : {SideBySide::kFloor, SideBySide::kStore, SideBySide::kHook}) {
      AllocWindow window;
      paths.Run(path, nullptr);
      counts[path].push_back(window.counts());
    }
  }
  run.floor_allocs = SummarizeAllocs(counts[SideBySide::kFloor]);
  run.store_allocs = SummarizeAllocs(counts[SideBySide::kStore]);
  run.commit_allocs = SummarizeAllocs(counts[SideBySide::kHook]);
  return run;
}

}  // namespace room_outbox::bench
