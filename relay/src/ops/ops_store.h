// OpsStore: the database side of the operator commands (outbox-relay stats, show, park, requeue,
// purge), over one MariaDbConnection with prepared statements (SQL in core/mysql/outbox_sql.h,
// section "operator commands"), all prepared right after connect.
//
// Every call is one or more short autocommit statements: nothing here holds a lock across calls,
// so the commands run beside live relays and hooks. Every absolute time (ages, parked_at_ms, the
// purge cut-off, "due now") is the database server's clock, read inside the statement.
//
// Interference with relays: park refuses a row that a claim holds right now (claim_token set and
// its lease not over on the server's clock) with kAborted, so a row is
// never parked under the relay that is sending it; requeue and purge touch only parked and
// published rows, which no claim ever holds.
//
// Not thread-safe (one connection).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/mysql/connection.h"
#include "core/result.h"
#include "room_outbox/options.h"
#include "store/attempt_history.h"

namespace room_outbox::relay::ops {

struct RoomHead {
  std::string room_id;
  int64_t pending = 0;
  std::string head_event_id;
  int64_t head_retry_count = 0;
  std::optional<std::string> head_last_error;
};

// The order of OutboxCounts::top_rooms.
enum class RoomOrder {
  kOldestHead,      // the rooms whose pending head is oldest first
  kLargestBacklog,  // the rooms with the most pending rows first (then the oldest head)
};

// What `stats` counts. Reads the pending and parked rows only, never a published one.
struct OutboxCounts {
  int64_t pending = 0;
  int64_t parked = 0;
  int64_t oldest_pending_age_ms = 0;  // server clock; 0 when nothing is pending
  int64_t rooms_held_back = 0;        // rooms with later rows behind a head that failed (kStats)
  int64_t rooms_pending = 0;          // rooms with pending rows
  std::vector<RoomHead> top_rooms;    // in the RoomOrder asked for; at most the number asked for
};

// One reading of the cheap server-side counters `stats` measures its rates by (kOpsSample).
struct OutboxSample {
  int64_t server_now_ms = 0;  // the database server's clock
  int64_t max_id = 0;         // the table's highest id (0 when empty): every insert takes a new one
  int64_t pending = 0;
};

struct OutboxRowDetail {
  std::string event_id;
  std::string event_type;
  std::string room_id;
  std::string command_id;
  std::string request_id;
  std::string status;
  int64_t retry_count = 0;
  std::optional<std::string> last_error;
  int64_t created_at_ms = 0;
  int64_t updated_at_ms = 0;
  std::optional<int64_t> published_at_ms;
  int64_t next_attempt_at_ms = 0;
  std::optional<int64_t> parked_at_ms;
  std::string envelope;  // JSON text as stored (may be undecodable)
  bool leased = false;   // a claim holds the row right now
  // The attempt history (schema 011, store/attempt_history.h): every entry the relay wrote, and
  // the last kAttemptsKept of them, oldest first.
  int64_t attempt_count = 0;
  std::vector<AttemptEntry> attempts;
};

struct PurgeRequest {
  int64_t published_before_ms = 0;               // delete published rows older than this age
  std::optional<int64_t> command_log_before_ms;  // and command-log rows older than this age
  int64_t batch_size = 1000;                     // rows per DELETE statement
  bool dry_run = false;                          // count only
};

struct PurgeResult {
  int64_t outbox_deleted = 0;
  int64_t command_log_deleted = 0;
  // Rows of the room schedule (room_outbox_room) idle since before the outbox cut-off: rooms
  // with no pending rows, listed anew when rows arrive again.
  int64_t idle_rooms_deleted = 0;
  int64_t outbox_batches = 0;
  int64_t command_log_batches = 0;
  int64_t idle_rooms_batches = 0;
  // The cut-offs used (server clock, epoch ms); command_log_cutoff_ms is 0 when not asked.
  int64_t outbox_cutoff_ms = 0;
  int64_t command_log_cutoff_ms = 0;
  // --dry-run: rows that would be deleted (the *_deleted fields stay 0).
  int64_t outbox_matching = 0;
  int64_t command_log_matching = 0;
  int64_t idle_rooms_matching = 0;
};

// The statements the operator commands send, prepared right after connect.
inline constexpr const core::sql::Statement* kOpsStatements[] = {
    &core::sql::Stmt::kOpsServerNowMinus,
    &core::sql::Stmt::kOpsSample,
    &core::sql::Stmt::kOpsCountParked,
    &core::sql::Stmt::kStats,
    &core::sql::Stmt::kOpsTopRooms,
    &core::sql::Stmt::kOpsTopRoomsByBacklog,
    &core::sql::Stmt::kOpsShow,
    &core::sql::Stmt::kOpsPark,
    &core::sql::Stmt::kOpsRequeueEvent,
    &core::sql::Stmt::kOpsRequeueRoom,
    &core::sql::Stmt::kOpsRequeueAllParked,
    &core::sql::Stmt::kOpsPurgeOutbox,
    &core::sql::Stmt::kOpsCountPurgeableOutbox,
    &core::sql::Stmt::kOpsPurgeCommandLog,
    &core::sql::Stmt::kOpsCountPurgeableCommandLog,
    &core::sql::Stmt::kOpsPurgeIdleRooms,
    &core::sql::Stmt::kOpsCountPurgeableIdleRooms,
};

class OpsStore {
 public:
  // Connects at once; fails with the connection's error (kUnavailable when the server is down).
  [[nodiscard]] static core::Result<std::unique_ptr<OpsStore>> Connect(const MysqlOptions& options);

  // The pending and parked rows, the oldest pending age, the rooms held back and with pending
  // rows, and `top_rooms` rooms in `order`. Reads no published row.
  [[nodiscard]] core::Result<OutboxCounts> Stats(int64_t top_rooms = 10,
                                                 RoomOrder order = RoomOrder::kOldestHead);

  // The server's clock, the table's highest id and the pending rows, in one statement.
  [[nodiscard]] core::Result<OutboxSample> Sample();

  // The rows this connection's statements have read so far (the session's Handler_read_*
  // counters): for tests of what `stats` costs.
  [[nodiscard]] core::Result<int64_t> RowsRead();

  // Parked rows (one index range count).
  [[nodiscard]] core::Result<int64_t> CountParked();

  // kNotFound when no row has this event_id.
  [[nodiscard]] core::Result<OutboxRowDetail> Show(const std::string& event_id);

  // Pending -> parked with last_error = "parked by operator: <reason>" (bounded to 512
  // characters). kNotFound: no such event. kAborted: a claim holds the row now (try again once it
  // is marked; the message says until when). kInvalidArgument: the row is not pending.
  [[nodiscard]] core::Result<OutboxRowDetail> Park(const std::string& event_id,
                                                   const std::string& reason);

  // Parked -> pending, due at once, retry_count and last_error kept. Returns the rows requeued.
  // RequeueEvent: kNotFound for an unknown event, kInvalidArgument for a row that is not parked.
  [[nodiscard]] core::Result<int64_t> RequeueEvent(const std::string& event_id);
  [[nodiscard]] core::Result<int64_t> RequeueRoom(const std::string& room_id,
                                                  int64_t batch_size = 1000);
  [[nodiscard]] core::Result<int64_t> RequeueAllParked(int64_t batch_size = 1000);

  // Deletes published outbox rows (and command-log rows) older than the request's ages, batch
  // after batch, each batch its own short transaction. Never touches pending or parked rows; a
  // command-log row whose command still has an unpublished outbox row is kept.
  [[nodiscard]] core::Result<PurgeResult> Purge(const PurgeRequest& request);

  // The database server's clock (epoch ms).
  [[nodiscard]] core::Result<int64_t> ServerNowMs();

 private:
  explicit OpsStore(std::unique_ptr<core::MariaDbConnection> conn) : conn_(std::move(conn)) {}
  [[nodiscard]] core::Result<int64_t> ServerNowMinus(int64_t ms);
  // The one row `id` answers; any other number of rows is kInternal, naming the statement.
  [[nodiscard]] core::Result<core::ResultRow> OneRow(const core::sql::Statement& id,
                                                     std::vector<core::SqlValue> params);
  [[nodiscard]] core::Result<int64_t> CountScalar(const core::sql::Statement& id,
                                                  std::vector<core::SqlValue> params);
  // The pending rows, the oldest pending age and rooms_held_back, from the statement the relay's
  // gauges read.
  [[nodiscard]] core::Result<void> ReadPendingStats(OutboxCounts& counts);
  [[nodiscard]] core::Result<int64_t> UpdateInBatches(
      const core::sql::Statement& id, std::vector<core::SqlValue> params_before_limit,
      int64_t batch_size, int64_t* batches);

  std::unique_ptr<core::MariaDbConnection> conn_;
};

}  // namespace room_outbox::relay::ops
