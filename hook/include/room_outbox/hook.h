// The room-outbox hook: the thin piece linked into room-service.
//
//   Hook::Commit(command, events, caller_statements)
//     BEGIN
//     INSERT room_command_log            (command_id is unique: a repeat writes nothing)
//     caller_statements(tx)              (e.g. the room snapshot) in the same transaction
//     INSERT room_outbox rows            (the last statement: pending rows with a short lease so
//                                         the relay leaves them alone while the sync publish
//                                         below is under way; rows of skip_event_types are
//                                         written published, never pending)
//     COMMIT
//     sync publish of the pending events to Tencent IM, in order, all of them within one
//     sync_publish_timeout (what does not fit goes to the relay) and within the lease
//       ok   -> best-effort mark published
//       fail -> the row stays pending with retry_count unchanged; outbox-relay delivers it
//
// Sync breaker: after 3 consecutive sync publishes that found IM failing (no answer, HTTP 5xx,
// an app-wide error, ...) the hooks of the process aimed at that IM app skip the sync publish
// for 30 s and write the pending rows due at once for the relay (kPending, "sync publish
// skipped: IM failing, breaker open"); then one commit probes. So an IM outage does not add
// sync_publish_timeout to every command.
//
// Checks at commit (kFailed + kInvalidArgument, nothing written): ids fit their columns, a
// valid GroupId, payloads nested at most 63 levels deep, and an IM request body of at most
// tencent_im.max_body_bytes (12288 by default) for every event sent to IM.
//
// A committed command is reported committed whatever IM did.
//
// Clocks: every time the commit stores (created_at_ms, the lease, published_at_ms, the command
// log's created_at_ms) is the database server's clock, read in the statements; the host's wall
// clock may be wrong. The sync publish is bounded on the host's monotonic clock, from just before
// the outbox insert, so it always ends before the lease it runs under. Only the envelope's
// occurred_at_ms (information for clients) is the host's wall clock.
//
// Connection failures: when the connection fails before COMMIT was sent (stale, server
// restarted, connection killed, server read-only after a failover), the server has rolled the
// transaction back; the hook reconnects and runs the whole command once more, transparently.
// caller_statements may therefore run twice for one Commit call (the first run was rolled back).
// When COMMIT was sent but its answer was lost, the hook reconnects and looks command_id up:
// found -> kCommitted, not found -> kFailed, lookup impossible -> kUnknown.
//
// Process-wide setup is the host's: call mysql_library_init() and curl_global_init() once in
// main() before creating a Hook, and their cleanups at exit. The hook never calls them.
//
// Thread-safety: a Hook owns one MariaDB connection and one HTTP connection; use one Hook per
// thread (or guard it). Nothing throws across this API.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "room_outbox/envelope.h"
#include "room_outbox/error.h"
#include "room_outbox/options.h"

namespace room_outbox {

// A severity-tagged line for the host's logger. The hook logs nothing unless given one.
enum class LogLevel { kDebug, kInfo, kWarn, kError };
using LogCallback = std::function<void(LogLevel, std::string_view)>;

struct HookOptions {
  MysqlOptions mysql;
  TencentImOptions tencent_im;
  // Bound on the whole sync publish of one command (its events in order). <= 0 means the
  // default, 500ms.
  std::chrono::milliseconds sync_publish_timeout{500};
  // false: no sync publish at all; pending rows are written due at once for outbox-relay.
  bool sync_publish = true;
  // Written into every envelope. Empty means the host name.
  std::string node_id;
  // Keep each room's events in commit order: when the room already has an earlier pending row,
  // the sync publish is skipped and the relay delivers the new row after the older ones.
  bool per_room_order = true;
  LogCallback log;
};

// A command the room service applied.
struct Command {
  std::string command_id;    // idempotency key; unique in room_command_log
  std::string room_id;
  std::string command_type;  // e.g. "JoinRoom"
  std::string request_id;    // tracing only
  int64_t room_seq = 0;      // the room's version after the command
  std::string payload = "{}";  // JSON object text, stored in the command log
};

// One event the command produced. room_id, command_id, request_id and node_id come from the
// command and the hook.
struct Event {
  std::string event_id;       // unique; clients dedupe by it
  std::string event_type;     // e.g. "RoomGiftSent"
  int64_t room_seq = 0;       // the room's version that this event reflects
  int64_t occurred_at_ms = 0;  // 0: the commit time
  std::string payload = "{}";  // JSON object text
};

// A parameter of a caller statement: NULL, an integer, a double or a string.
using SqlValue = std::variant<std::monostate, int64_t, double, std::string>;

// The open transaction handed to the caller's statements.
class Transaction {
 public:
  virtual ~Transaction() = default;
  // Runs one statement with `?` placeholders as a prepared statement. A failure here rolls back
  // the whole commit once the callback returns (return the Status to do so at once).
  virtual Status Execute(std::string_view sql, const std::vector<SqlValue>& params) = 0;
};

using CallerStatements = std::function<Status(Transaction&)>;

enum class CommitStatus {
  kCommitted,  // command log and outbox rows are durable
  kDuplicate,  // command_id was already committed; nothing was written or published
  kFailed,     // rolled back; `error` says why. Nothing was published.
  // The command may have committed: COMMIT was sent, its answer was lost and the lookup that
  // would tell could not be made either (`error` says why). Nothing was published by the hook;
  // if it did commit, outbox-relay delivers its events. Retry with the same command_id to learn
  // which: kDuplicate means it had committed, kCommitted means it had not (and now has).
  // Do not apply the command to in-memory state before you know.
  kUnknown,
};

enum class DeliveryState {
  kPublished,  // the sync publish succeeded (the mark is best-effort)
  kSkipped,    // a type not sent to IM (skip_event_types); written published by the commit
  kPending,    // left for outbox-relay; `error` says why
};

struct EventDelivery {
  std::string event_id;
  DeliveryState state = DeliveryState::kPending;
  std::string error;  // short, secret-free; empty unless pending
};

struct CommitResult {
  CommitStatus status = CommitStatus::kFailed;
  Error error;                         // set when status is kFailed or kUnknown
  std::vector<EventDelivery> events;   // one per event, in order, when kCommitted
};

class Hook {
 public:
  virtual ~Hook() = default;
  Hook() = default;
  Hook(const Hook&) = delete;
  Hook& operator=(const Hook&) = delete;

  // Commits the command, its events and the caller's statements in one transaction, then tries
  // the sync publish. See the file comment.
  virtual CommitResult Commit(const Command& command, const std::vector<Event>& events,
                              const CallerStatements& caller_statements = {}) = 0;
};

// Connects to MariaDB and prepares the IM publisher. On failure returns null and fills *error
// (connection or configuration problem, never a secret).
std::unique_ptr<Hook> CreateHook(const HookOptions& options, Error* error);

}  // namespace room_outbox
