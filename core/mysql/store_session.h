// StoreSession: the connection policy both stores share (the hook's MariaDbHookStore and the
// relay's MariaDbRelayStore), plus the two writes both sides make on rows held by a claim token
// (MarkPublished, Release).
//
// Connection policy: nothing connects at construction, so a daemon can start while the database
// is down; every call connects when there is no connection, and Connect() does it eagerly for
// callers that want to fail fast. A call that fails with kUnavailable (connection lost or killed,
// server shutting down, read-only server) drops the connection together with its prepared
// statements; the next call connects anew. kAborted (deadlock, lock wait timeout) keeps the
// connection: the transaction was rolled back and can run again at once. A connection idle for
// kPingAfterIdle (on the session's monotonic clock) is pinged before use, so a server-side idle
// timeout costs a reconnect, not a failed call. So is every connection of the process after any
// session of it saw a connection fault (NoteConnectionFault): a server that restarted or failed
// over closed them all, and each finds out with a ping, not with a failed call that would cost its
// caller a round and a back-off. Right after each connect the session prepares
// the statements its owner names (kHookStatements, kRelayStatements): a statement the
// server cannot parse fails the connect, not the first call that needs it.
//
// Thread-safety: none; one session per thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/clock.h"
#include "core/mysql/connection.h"
#include "core/result.h"
#include "core/wipe.h"
#include "room_outbox/options.h"

namespace room_outbox::core {

class StoreSession {
 public:
  // A connection unused for this long is pinged before the next call.
  static constexpr std::chrono::seconds kPingAfterIdle{30};

  // A session of the process dropped its connection for a connection fault (kUnavailable): every
  // other session pings its connection before its next call. Process-wide, thread-safe.
  static void NoteConnectionFault();
  static uint64_t ConnectionFaults();

  // `prepare_at_connect` must outlive the session (the lists above do). On a SystemClock of its
  // own.
  StoreSession(const MysqlOptions& options,
               std::span<const sql::Statement* const> prepare_at_connect)
      : options_(options), prepare_at_connect_(prepare_at_connect), clock_(system_clock_) {}
  // On `clock` (its SteadyMs times the idle ping), which must outlive the session.
  StoreSession(const MysqlOptions& options,
               std::span<const sql::Statement* const> prepare_at_connect, Clock& clock)
      : options_(options), prepare_at_connect_(prepare_at_connect), clock_(clock) {}
  StoreSession(const StoreSession&) = delete;
  StoreSession& operator=(const StoreSession&) = delete;

  // Connects now unless connected. Errors: kUnavailable (server unreachable),
  // kPermissionDenied, kNotFound (unknown database), kInvalidArgument.
  [[nodiscard]] Result<void> Connect();
  bool connected() const { return conn_ != nullptr; }
  // The server's id of the current connection; 0 when not connected.
  uint64_t connection_id() const { return conn_ ? conn_->ConnectionId() : 0; }
  // The session's clock, for the stores built on it.
  Clock& clock() { return clock_; }

  // Runs `body` on a live connection; drops the connection after a kUnavailable failure or when
  // the body asked for it (DropAfterCall).
  template <class Body>
  auto WithConnection(Body&& body) -> decltype(body(std::declval<MariaDbConnection&>()));
  // Begin, `body`, Commit; rolls back when `body` or the commit fails.
  template <class Body>
  auto InTransaction(MariaDbConnection& conn, Body&& body) -> decltype(body());
  // Best-effort ROLLBACK; when even that fails the connection is dropped after the call.
  void Abort(MariaDbConnection& conn);
  // The connection is useless after this call (e.g. a COMMIT whose answer was lost).
  void DropAfterCall() { drop_after_call_ = true; }

  // The UPDATE `id` (an id list: ... claim_token=? ... AND id IN (...)) for every id, in
  // fixed-size chunks (one transaction when there is more than one chunk). `set_params` come
  // before the token. Returns the rows changed.
  [[nodiscard]] Result<size_t> UpdateHeld(MariaDbConnection& conn, const sql::Statement& id,
                                          std::vector<SqlValue> set_params,
                                          const std::string& token, std::span<const int64_t> ids);
  // The same statements inside the caller's transaction (never one of its own).
  [[nodiscard]] static Result<size_t> UpdateHeldChunks(MariaDbConnection& conn,
                                                       const sql::Statement& id,
                                                       const std::vector<SqlValue>& set_params,
                                                       const std::string& token,
                                                       std::span<const int64_t> ids);

  // status='published', last_error=NULL, published_at_ms=server now for the rows still held by
  // `token`. Returns how many rows were marked.
  [[nodiscard]] Result<size_t> MarkPublished(const std::string& token,
                                             std::span<const int64_t> ids);
  // Due at once (server now), retry_count unchanged, for the rows still held by `token`, with
  // `release` (sql::Stmt::kRelease, or the relay's kRelayRelease, which also lists them again).
  [[nodiscard]] Result<size_t> Release(const std::string& token, std::span<const int64_t> ids,
                                       const sql::Statement& release = sql::Stmt::kRelease);

  // The sum of this connection's Handler_read_* session counters: how many index and row reads
  // the server did for it so far, this call's own SHOW STATUS included (take a difference of two
  // calls to cost a statement). For tests and benchmarks of a statement's cost; sent as text on
  // both servers (SHOW is not preparable on MySQL).
  [[nodiscard]] Result<int64_t> RowsRead();

 private:
  [[nodiscard]] Result<MariaDbConnection*> Live();

  SecretOwner<MysqlOptions> options_;  // the password wiped with the session
  std::span<const sql::Statement* const> prepare_at_connect_;
  SystemClock system_clock_;  // the clock unless one was given
  Clock& clock_;
  std::unique_ptr<MariaDbConnection> conn_;
  bool drop_after_call_ = false;
  int64_t last_used_ms_ = 0;  // clock_.SteadyMs() at the end of the last call
  uint64_t faults_seen_ = 0;  // ConnectionFaults() when the connection was last known live
};

template <class Body>
auto StoreSession::WithConnection(Body&& body)
    -> decltype(body(std::declval<MariaDbConnection&>())) {
  auto conn = Live();
  if (!conn) {
    return Fail(conn.error());
  }
  drop_after_call_ = false;
  auto result = body(**conn);
  if (!result && result.error().code == ErrorCode::kUnavailable) {
    NoteConnectionFault();
    conn_.reset();
  } else if (drop_after_call_) {
    conn_.reset();
  } else {
    last_used_ms_ = clock_.SteadyMs();
  }
  drop_after_call_ = false;
  return result;
}

template <class Body>
auto StoreSession::InTransaction(MariaDbConnection& conn, Body&& body) -> decltype(body()) {
  if (auto begun = conn.Begin(); !begun) {
    return Fail(begun.error());
  }
  auto result = body();
  if (!result) {
    Abort(conn);
    return result;
  }
  if (auto committed = conn.Commit(); !committed) {
    Abort(conn);
    return Fail(committed.error());
  }
  return result;
}

}  // namespace room_outbox::core
