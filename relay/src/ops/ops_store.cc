#include "ops/ops_store.h"

#include <algorithm>
#include <utility>

#include "core/mysql/outbox_sql.h"
#include "core/utf8.h"

namespace room_outbox::relay::ops {
namespace {

constexpr std::string_view kParkedByOperator = "parked by operator: ";

std::optional<std::string> OptStr(const core::ResultRow& row, size_t i) {
  if (row.IsNull(i)) return std::nullopt;
  return row.Str(i);
}

core::Result<std::optional<int64_t>> OptInt(const core::ResultRow& row, size_t i) {
  if (row.IsNull(i)) return std::optional<int64_t>();
  auto v = row.Int(i);
  if (!v) return core::Fail(v.error());
  return std::optional<int64_t>(*v);
}

// Reads the listed integer columns of `row` into the targets, stopping at the first error.
core::Result<void> Ints(const core::ResultRow& row,
                        std::initializer_list<std::pair<size_t, int64_t*>> cols) {
  for (const auto& [i, target] : cols) {
    auto v = row.Int(i);
    if (!v) return core::Fail(v.error());
    *target = *v;
  }
  return {};
}

}  // namespace

core::Result<std::unique_ptr<OpsStore>> OpsStore::Connect(const MysqlOptions& options) {
  auto conn = core::MariaDbConnection::Connect(options);
  if (!conn) return core::Fail(conn.error());
  if (auto prepared = (*conn)->PrepareNow(kOpsStatements); !prepared) {
    return core::Fail(prepared.error());
  }
  return std::unique_ptr<OpsStore>(new OpsStore(std::move(*conn)));
}

core::Result<core::ResultRow> OpsStore::OneRow(const core::sql::Statement& id,
                                               std::vector<core::SqlValue> params) {
  auto stmt = conn_->Prepared(id);
  if (!stmt) return core::Fail(stmt.error());
  if (auto done = (*stmt)->Execute(params); !done) return core::Fail(done.error());
  auto rows = (*stmt)->FetchAll();
  if (!rows) return core::Fail(rows.error());
  if (rows->size() != 1) {
    return core::Fail(ErrorCode::kInternal,
                      (*stmt)->name() + ": expected one row, got " + std::to_string(rows->size()));
  }
  return std::move((*rows)[0]);
}

core::Result<int64_t> OpsStore::CountScalar(const core::sql::Statement& id,
                                            std::vector<core::SqlValue> params) {
  auto row = OneRow(id, std::move(params));
  if (!row) return core::Fail(row.error());
  return row->Int(0);
}

core::Result<void> OpsStore::ReadPendingStats(OutboxCounts& counts) {
  auto row = OneRow(core::sql::Stmt::kStats, {});
  if (!row) return core::Fail(row.error());
  return Ints(
      *row,
      {{0, &counts.pending}, {1, &counts.oldest_pending_age_ms}, {2, &counts.rooms_held_back}});
}

core::Result<int64_t> OpsStore::ServerNowMinus(int64_t ms) {
  auto stmt = conn_->Prepared(core::sql::Stmt::kOpsServerNowMinus);
  if (!stmt) return core::Fail(stmt.error());
  if (auto done = (*stmt)->Execute(std::vector<core::SqlValue>{core::SqlValue{ms}}); !done) {
    return core::Fail(done.error());
  }
  auto rows = (*stmt)->FetchAll();
  if (!rows) return core::Fail(rows.error());
  if (rows->size() != 1) {
    return core::Fail(ErrorCode::kInternal, "ops_server_now_minus: expected one row");
  }
  return (*rows)[0].Int(1);
}

core::Result<int64_t> OpsStore::ServerNowMs() { return ServerNowMinus(0); }

core::Result<OutboxCounts> OpsStore::Stats(int64_t top_rooms, RoomOrder order) {
  OutboxCounts counts;
  if (auto read = ReadPendingStats(counts); !read) return core::Fail(read.error());
  auto parked = CountParked();
  if (!parked) return core::Fail(parked.error());
  counts.parked = *parked;

  const core::sql::Statement& id = order == RoomOrder::kLargestBacklog
                                       ? core::sql::Stmt::kOpsTopRoomsByBacklog
                                       : core::sql::Stmt::kOpsTopRooms;
  auto stmt = conn_->Prepared(id);
  if (!stmt) return core::Fail(stmt.error());
  // At least one row, so that the number of rooms with pending rows is known with --top 0.
  const int64_t limit = std::max<int64_t>(top_rooms, 1);
  if (auto done = (*stmt)->Execute(std::vector<core::SqlValue>{core::SqlValue{limit}}); !done) {
    return core::Fail(done.error());
  }
  auto rows = (*stmt)->FetchAll();
  if (!rows) return core::Fail(rows.error());
  for (const core::ResultRow& row : *rows) {
    RoomHead head;
    head.room_id = row.Str(0);
    head.head_event_id = row.Str(2);
    if (auto ok = Ints(
            row, {{1, &head.pending}, {3, &head.head_retry_count}, {5, &counts.rooms_pending}});
        !ok) {
      return core::Fail(ok.error());
    }
    head.head_last_error = OptStr(row, 4);
    if (static_cast<int64_t>(counts.top_rooms.size()) < top_rooms) {
      counts.top_rooms.push_back(std::move(head));
    }
  }
  return counts;
}

core::Result<OutboxSample> OpsStore::Sample() {
  auto row = OneRow(core::sql::Stmt::kOpsSample, {});
  if (!row) return core::Fail(row.error());
  OutboxSample sample;
  if (auto ok = Ints(*row, {{0, &sample.server_now_ms}, {1, &sample.max_id}, {2, &sample.pending}});
      !ok) {
    return core::Fail(ok.error());
  }
  return sample;
}

core::Result<int64_t> OpsStore::RowsRead() {
  auto rows = conn_->QueryText(core::sql::Stmt::kSessionRowsRead.name, core::sql::kSessionRowsRead);
  if (!rows) return core::Fail(rows.error());
  int64_t total = 0;
  for (const core::MariaDbConnection::TextRow& row : *rows) {
    if (row.size() < 2 || !row[1]) {
      return core::Fail(ErrorCode::kInternal, "session_rows_read: a row without a value");
    }
    total += std::stoll(*row[1]);
  }
  return total;
}

core::Result<int64_t> OpsStore::CountParked() {
  return CountScalar(core::sql::Stmt::kOpsCountParked, {});
}

core::Result<OutboxRowDetail> OpsStore::Show(const std::string& event_id) {
  auto stmt = conn_->Prepared(core::sql::Stmt::kOpsShow);
  if (!stmt) return core::Fail(stmt.error());
  if (auto done = (*stmt)->Execute(std::vector<core::SqlValue>{core::SqlValue{event_id}}); !done) {
    return core::Fail(done.error());
  }
  auto rows = (*stmt)->FetchAll();
  if (!rows) return core::Fail(rows.error());
  if (rows->empty()) {
    return core::Fail(ErrorCode::kNotFound, "no outbox row with event_id \"" + event_id + "\"");
  }
  core::ResultRow& row = (*rows)[0];
  OutboxRowDetail d;
  d.event_id = row.Str(0);
  d.event_type = row.Str(1);
  d.room_id = row.Str(2);
  d.status = row.Str(3);
  d.last_error = OptStr(row, 5);
  int64_t leased = 0;
  if (auto ok = Ints(row, {{4, &d.retry_count},
                           {6, &d.created_at_ms},
                           {7, &d.updated_at_ms},
                           {9, &d.next_attempt_at_ms},
                           {14, &leased}});
      !ok) {
    return core::Fail(ok.error());
  }
  auto published = OptInt(row, 8);
  auto parked = OptInt(row, 10);
  if (!published || !parked) return core::Fail(!published ? published.error() : parked.error());
  d.published_at_ms = *published;
  d.parked_at_ms = *parked;
  d.envelope = row.TakeStr(11);
  d.command_id = row.Str(12);
  d.request_id = row.Str(13);
  d.leased = leased != 0;
  if (auto count = row.Int(15); count) {
    d.attempt_count = *count;
  } else {
    return core::Fail(count.error());
  }
  if (auto text = OptStr(row, 16); text) {
    auto entries = ParseAttempts(*text);
    if (!entries)
      return core::Fail(entries.error().code,
                        "event " + d.event_id + ": " + entries.error().message);
    d.attempts = std::move(*entries);
  }
  return d;
}

core::Result<OutboxRowDetail> OpsStore::Park(const std::string& event_id,
                                             const std::string& reason) {
  const std::string last_error =
      core::TruncateUtf8(std::string(kParkedByOperator) + reason, core::kMaxLastErrorChars);
  auto stmt = conn_->Prepared(core::sql::Stmt::kOpsPark);
  if (!stmt) return core::Fail(stmt.error());
  if (auto done = (*stmt)->Execute(
          std::vector<core::SqlValue>{core::SqlValue{last_error}, core::SqlValue{event_id}});
      !done) {
    return core::Fail(done.error());
  }
  const uint64_t parked = (*stmt)->AffectedRows();
  auto row = Show(event_id);
  if (!row) return core::Fail(row.error());
  if (parked == 1) return row;
  if (row->status != "pending") {
    return core::Fail(ErrorCode::kInvalidArgument, "event \"" + event_id + "\" is " + row->status +
                                                       ", not pending: only a pending "
                                                       "row can be parked");
  }
  if (row->leased) {
    return core::Fail(
        ErrorCode::kAborted,
        "event \"" + event_id + "\" is being sent by a relay right now (leased until " +
            std::to_string(row->next_attempt_at_ms) +
            " ms, server clock); not parked: run the command again once the relay has "
            "marked its attempt (usually within publish_timeout)");
  }
  return core::Fail(ErrorCode::kAborted,
                    "event \"" + event_id + "\" changed while being parked; run the command again");
}

core::Result<int64_t> OpsStore::RequeueEvent(const std::string& event_id) {
  auto stmt = conn_->Prepared(core::sql::Stmt::kOpsRequeueEvent);
  if (!stmt) return core::Fail(stmt.error());
  if (auto done = (*stmt)->Execute(std::vector<core::SqlValue>{core::SqlValue{event_id}}); !done) {
    return core::Fail(done.error());
  }
  if ((*stmt)->AffectedRows() == 1) return 1;
  auto row = Show(event_id);
  if (!row) return core::Fail(row.error());
  return core::Fail(ErrorCode::kInvalidArgument, "event \"" + event_id + "\" is " + row->status +
                                                     ", not parked: nothing to requeue");
}

core::Result<int64_t> OpsStore::UpdateInBatches(const core::sql::Statement& id,
                                                std::vector<core::SqlValue> params,
                                                int64_t batch_size, int64_t* batches) {
  auto stmt = conn_->Prepared(id);
  if (!stmt) return core::Fail(stmt.error());
  params.emplace_back(batch_size);
  int64_t total = 0;
  while (true) {
    if (auto done = (*stmt)->Execute(params); !done) return core::Fail(done.error());
    const auto n = static_cast<int64_t>((*stmt)->AffectedRows());
    if (n == 0) break;
    total += n;
    if (batches != nullptr) ++*batches;
    if (n < batch_size) break;
  }
  return total;
}

core::Result<int64_t> OpsStore::RequeueRoom(const std::string& room_id, int64_t batch_size) {
  return UpdateInBatches(core::sql::Stmt::kOpsRequeueRoom, {core::SqlValue{room_id}}, batch_size,
                         nullptr);
}

core::Result<int64_t> OpsStore::RequeueAllParked(int64_t batch_size) {
  return UpdateInBatches(core::sql::Stmt::kOpsRequeueAllParked, {}, batch_size, nullptr);
}

core::Result<PurgeResult> OpsStore::Purge(const PurgeRequest& request) {
  if (request.batch_size <= 0) {
    return core::Fail(ErrorCode::kInvalidArgument, "purge: batch size must be positive");
  }
  PurgeResult result;
  auto cutoff = ServerNowMinus(request.published_before_ms);
  if (!cutoff) return core::Fail(cutoff.error());
  result.outbox_cutoff_ms = *cutoff;
  if (request.command_log_before_ms) {
    auto log_cutoff = ServerNowMinus(*request.command_log_before_ms);
    if (!log_cutoff) return core::Fail(log_cutoff.error());
    result.command_log_cutoff_ms = *log_cutoff;
  }
  if (request.dry_run) {
    auto n = CountScalar(core::sql::Stmt::kOpsCountPurgeableOutbox,
                         {core::SqlValue{result.outbox_cutoff_ms}});
    if (!n) return core::Fail(n.error());
    result.outbox_matching = *n;
    auto rooms = CountScalar(core::sql::Stmt::kOpsCountPurgeableIdleRooms,
                             {core::SqlValue{result.outbox_cutoff_ms}});
    if (!rooms) return core::Fail(rooms.error());
    result.idle_rooms_matching = *rooms;
    if (request.command_log_before_ms) {
      auto m = CountScalar(core::sql::Stmt::kOpsCountPurgeableCommandLog,
                           {core::SqlValue{result.command_log_cutoff_ms}});
      if (!m) return core::Fail(m.error());
      result.command_log_matching = *m;
    }
    return result;
  }
  // Outbox rows first: a command-log row is kept while its command has unpublished rows, and
  // deleting published outbox rows never changes that.
  auto deleted =
      UpdateInBatches(core::sql::Stmt::kOpsPurgeOutbox, {core::SqlValue{result.outbox_cutoff_ms}},
                      request.batch_size, &result.outbox_batches);
  if (!deleted) return core::Fail(deleted.error());
  result.outbox_deleted = *deleted;
  auto rooms = UpdateInBatches(core::sql::Stmt::kOpsPurgeIdleRooms,
                               {core::SqlValue{result.outbox_cutoff_ms}}, request.batch_size,
                               &result.idle_rooms_batches);
  if (!rooms) return core::Fail(rooms.error());
  result.idle_rooms_deleted = *rooms;
  if (request.command_log_before_ms) {
    auto log_deleted = UpdateInBatches(core::sql::Stmt::kOpsPurgeCommandLog,
                                       {core::SqlValue{result.command_log_cutoff_ms}},
                                       request.batch_size, &result.command_log_batches);
    if (!log_deleted) return core::Fail(log_deleted.error());
    result.command_log_deleted = *log_deleted;
  }
  return result;
}

}  // namespace room_outbox::relay::ops
