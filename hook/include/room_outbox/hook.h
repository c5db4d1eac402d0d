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
// HookOptions::sync_publish chooses who makes that publish ([hook] sync_publish):
//   kInline (default)  Commit itself, as above, before it returns.
//   kBackground        Commit returns right after COMMIT with the events kQueued; a thread the
//                      Hook owns (own MariaDB connection, own HTTP client, the same process-wide
//                      rate budget and sync breaker) publishes them in commit order with the same
//                      lease, marks and deadline (sync_publish_timeout from the commit); what
//                      fails or runs out of time is released to the relay at once, together
//                      with the room's later queued rows. A full queue (background_queue) or a
//                      room whose earlier pending row is not the queue's own leaves the rows to
//                      the relay. Destroying the Hook publishes or releases what is queued
//                      within sync_publish_timeout; a row it could not release stays leased and
//                      the relay takes it when the lease ends.
//   kOff               no sync publish: the rows are due at once and outbox-relay delivers them.
// Whenever rows are left for the relay the hook sends one datagram to HookOptions::wake_socket
// (outbox-relay's [wake] socket), non-blocking and best effort; never when all were published.
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
// Thread-safety: a Hook owns one MariaDB connection and one HTTP connection (two of each with
// kBackground); use one Hook per thread (or guard it). With kBackground the log callback is also
// called from the hook's own thread. Nothing throws across this API.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "room_outbox/envelope.h"
#include "room_outbox/error.h"
#include "room_outbox/export.h"
#include "room_outbox/hook_metrics.h"
#include "room_outbox/options.h"

namespace room_outbox {

// A severity-tagged line for the host's logger. The hook logs nothing unless given one.
enum class LogLevel { kDebug, kInfo, kWarn, kError };
using LogCallback = std::function<void(LogLevel, std::string_view)>;

// The default of HookOptions::background_queue, also applied to 0 by CreateHook.
inline constexpr size_t kDefaultBackgroundQueue = 256;

struct HookOptions {
  MysqlOptions mysql;
  TencentImOptions tencent_im;
  // Bound on the whole sync publish of one command (its events in order). <= 0 means the
  // default, kDefaultSyncPublishTimeout.
  std::chrono::milliseconds sync_publish_timeout = kDefaultSyncPublishTimeout;
  // What Commit does with a committed command's pending rows (see SyncPublishMode).
  SyncPublishMode sync_publish = SyncPublishMode::kInline;
  // outbox-relay's wake socket ([wake] socket): an absolute unix datagram socket path, or empty
  // for none. Whenever the hook leaves rows for the relay it sends one datagram there
  // (non-blocking, best effort: nothing bound there never fails or slows a Commit).
  std::string wake_socket;
  // kBackground: the most commands waiting for the background publisher; a command that finds
  // the queue full has its rows written due at once for the relay. 0: kDefaultBackgroundQueue.
  size_t background_queue = kDefaultBackgroundQueue;
  // Written into every envelope. Empty means the host name (gethostname; "unknown-host" when
  // there is none).
  std::string node_id;
  // Keep each room's events in commit order: when the room already has an earlier pending row,
  // the sync publish is skipped and the relay delivers the new row after the older ones.
  bool per_room_order = true;
  LogCallback log;
};

// A command the room service applied.
struct Command {
  std::string command_id;  // idempotency key; unique in room_command_log
  std::string room_id;
  std::string command_type;    // e.g. "JoinRoom"
  std::string request_id;      // tracing only
  int64_t room_seq = 0;        // the room's version after the command
  std::string payload = "{}";  // JSON object text, stored in the command log
};

// One event the command produced. room_id, command_id, request_id and node_id come from the
// command and the hook.
struct Event {
  std::string event_id;        // unique; clients dedupe by it
  std::string event_type;      // e.g. "RoomGiftSent"
  int64_t room_seq = 0;        // the room's version that this event reflects
  int64_t occurred_at_ms = 0;  // 0: the commit time
  std::string payload = "{}";  // JSON object text
};

// A parameter of a caller statement: NULL, an integer, a double or a string.
using SqlValue = std::variant<std::monostate, int64_t, double, std::string>;

// The open transaction handed to the caller's statements.
class ROOM_OUTBOX_EXPORT Transaction {
 public:
  virtual ~Transaction() = default;
  // Runs one statement with `?` placeholders as a prepared statement. A failure here rolls back
  // the whole commit once the callback returns (return the Status to do so at once). A statement
  // that would end the transaction (COMMIT, ROLLBACK, BEGIN, DDL, SET autocommit, the others that
  // commit implicitly) is refused with kInvalidArgument; a Commit on the same Hook from inside
  // the callback is refused too (docs/hook.md, "What the statements callback may run").
  virtual Status Execute(std::string_view sql, const std::vector<SqlValue>& params) = 0;
  // Execute, and on success stores in *affected_rows (when not null) the rows the statement
  // matched: for UPDATE the rows its WHERE found, whether or not their values changed (the
  // hook connects with CLIENT_FOUND_ROWS), for DELETE the rows deleted, for INSERT the rows
  // inserted (INSERT ... ON DUPLICATE KEY UPDATE: 1 per new row, 2 per updated one, 1 per row
  // found already equal), for REPLACE deleted + inserted, for a SELECT the rows it returned.
  // So the optimistic check `UPDATE room_snapshot SET ... WHERE room_id = ? AND room_seq = ?`
  // reads 1 when the room was at the expected version and 0 when another command got there
  // first (return an error then to roll the command back). On failure *affected_rows is 0.
  // Not virtual (the class's layout and vtable stay those of the .so.1 baseline): it works on
  // the Transaction the hook hands to the callback; on another implementation (a test fake) it
  // returns kInvalidArgument and runs nothing.
  Status ExecuteAffected(std::string_view sql, const std::vector<SqlValue>& params,
                         uint64_t* affected_rows);
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
  // kBackground only: handed to the hook's background publisher, which publishes it shortly
  // or, when IM fails or its time runs out, leaves it to outbox-relay. Either way it is
  // delivered; the Commit result cannot say by whom.
  kQueued,
};

struct EventDelivery {
  std::string event_id;
  DeliveryState state = DeliveryState::kPending;
  std::string error;  // short, secret-free; empty unless pending
};

struct CommitResult {
  CommitStatus status = CommitStatus::kFailed;
  Error error;                        // set when status is kFailed or kUnknown
  std::vector<EventDelivery> events;  // one per event, in order, when kCommitted
};

class ROOM_OUTBOX_EXPORT Hook {
 public:
  virtual ~Hook() = default;
  Hook() = default;
  Hook(const Hook&) = delete;
  Hook& operator=(const Hook&) = delete;

  // Commits the command, its events and the caller's statements in one transaction, then tries
  // the sync publish. See the file comment.
  virtual CommitResult Commit(const Command& command, const std::vector<Event>& events,
                              const CallerStatements& caller_statements = {}) = 0;

  // What this Hook counted since it was created (room_outbox/hook_metrics.h). Thread-safe and
  // lock-free: any thread may call it while a Commit runs, and it never waits for one. Not
  // virtual (the vtable of the first release stays as it was): a Hook that CreateHook did not
  // make, e.g. a test double, reports all zeros.
  HookMetrics Metrics() const;
  // Metrics() in the Prometheus text format, every sample labelled hook="<hook_label>" unless it
  // is empty. For several Hooks of one process call HookMetricsText once over all of them.
  std::string MetricsText(std::string_view hook_label = {}) const {
    return HookMetricsText({LabelledHookMetrics{std::string(hook_label), Metrics()}});
  }
};

// Process-wide setup of the C libraries the hook uses: mysql_library_init() and
// curl_global_init(CURL_GLOBAL_DEFAULT) at construction, their cleanups at destruction. A host
// that does not call them itself creates one LibraryInit in main() before any thread and any
// Hook, and keeps it until the last Hook is destroyed. Not thread-safe (neither library's init
// is); one per process.
class ROOM_OUTBOX_EXPORT LibraryInit {
 public:
  LibraryInit();
  ~LibraryInit();
  LibraryInit(const LibraryInit&) = delete;
  LibraryInit& operator=(const LibraryInit&) = delete;
  // OK, or which init failed and why (do not create a Hook then).
  const Status& status() const { return status_; }

 private:
  Status status_;
  bool curl_ = false;
};

// Reads HookOptions from the TOML file outbox-relay reads (relay.toml), so one file configures a
// deployment: top-level node_id, [mysql], [tencent_im] (with [tencent_im.priority_by_type]),
// [hook] (sync_publish_timeout, sync_publish), [wake] socket, and [outbox_worker] ordering
// (per_room_order). The secrets come as the relay reads them: mysql.password_file /
// ROOM_OUTBOX_MYSQL_PASSWORD and tencent_im.secret_key_file / ROOM_OUTBOX_TIM_SECRET_KEY (the
// environment wins; a relative file is resolved against $CREDENTIALS_DIRECTORY, else the config
// file's directory). The relay's own keys ([outbox_worker] but ordering, [log], [metrics], the
// rest of [wake]) are accepted and not read: outbox-relay --check-config validates them.
// [tencent_im.max_age_by_type] (the relay's expiry) is validated and not used: a commit never
// expires its own events. An
// unknown section, an unknown key of a section read here or an invalid value fails with
// kInvalidArgument naming the key ("path:line:col: mysql.port: ..."); an unreadable file with
// kNotFound. A file without [tencent_im] sdk_app_id, admin_identifier or a secret key is
// loaded (CreateHook refuses it unless sync_publish is "off"). On failure returns nullopt and
// fills *error (never with a secret). `log` is empty.
ROOM_OUTBOX_EXPORT std::optional<HookOptions> LoadHookOptions(const std::string& path,
                                                              Error* error);
// The same, and on success appends to *warnings (when not null) one sentence for each thing the
// file's secrets allow that is unsafe: a secret file (mysql.password_file,
// tencent_im.secret_key_file, mysql.ssl_key) that its group or other users may read. Log them
// as warnings. The TLS warning about the database link is CreateHook's (through
// HookOptions::log), since it depends on the options a host may still change.
ROOM_OUTBOX_EXPORT std::optional<HookOptions> LoadHookOptions(const std::string& path, Error* error,
                                                              std::vector<std::string>* warnings);

// Connects to MariaDB and prepares the IM publisher. On failure returns null and fills *error
// (connection or configuration problem, never a secret). A hook that sends (sync_publish
// kInline or kBackground) needs the IM app's credentials: tencent_im.sdk_app_id,
// admin_identifier and secret_key, each refused (kInvalidArgument naming the key) when missing;
// with kOff it sends nothing and needs none of them. Before connecting it logs through
// options.log, at kWarn and on the calling thread, "configuration warning: " and what the
// database link's TLS leaves open when it is a TCP connection to a host that is not loopback
// and ssl_mode does not verify the server (docs/databases.md, "TLS to the database").
ROOM_OUTBOX_EXPORT std::unique_ptr<Hook> CreateHook(const HookOptions& options, Error* error);

}  // namespace room_outbox
