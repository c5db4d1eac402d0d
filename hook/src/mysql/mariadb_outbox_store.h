// MariaDbOutboxStore: the OutboxStore over one MariaDB connection (see outbox_store.h for the
// contract of each call).
//
// Connection policy: the factory does not connect, so a daemon can start while the database is
// down; every call connects when there is no connection, and Connect() does it eagerly for
// callers that want to fail fast. A call that fails with kUnavailable (connection lost or
// killed, server shutting down, read-only server) drops the connection together with its
// prepared statements; the next call connects anew. kAborted (deadlock, lock wait timeout) keeps
// the connection: the transaction was rolled back and can run again at once (ClaimDue does, a
// few times). A connection idle for a while is pinged
// before use, so a server-side idle timeout costs a reconnect, not a failed call.
//
// Every statement that carries a value is a server-side prepared statement, prepared once per
// connection; their texts are in outbox_sql.h. Id lists are bound into a few fixed
// placeholder-list sizes (id_lists.h).
//
// The calls are implemented by job: connection policy and Stats in mariadb_outbox_store.cc, the
// commit in mariadb_commit.cc, the claim in mariadb_claim.cc, the result writes in
// mariadb_marks.cc.
//
// Thread-safety: none; one store per thread (two stores may run concurrently against the same
// database: claims never overlap).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "mysql/connection.h"
#include "outbox_store.h"
#include "room_outbox/options.h"

namespace room_outbox {

// last_error holds at most this many characters.
inline constexpr size_t kMaxLastErrorChars = 512;

// `text` cut to at most `max_chars` UTF-8 characters, never inside a character; bytes that are
// not valid UTF-8 become '?' (the column is utf8mb4 and the server would refuse them).
[[nodiscard]] std::string TruncateUtf8(std::string_view text, size_t max_chars);

class MariaDbOutboxStore final : public OutboxStore {
 public:
  // A connection unused for this long is pinged before the next call.
  static constexpr std::chrono::seconds kPingAfterIdle{30};

  explicit MariaDbOutboxStore(MysqlOptions options);
  ~MariaDbOutboxStore() override;
  MariaDbOutboxStore(const MariaDbOutboxStore&) = delete;
  MariaDbOutboxStore& operator=(const MariaDbOutboxStore&) = delete;

  // Connects now unless connected. Errors: kUnavailable (server unreachable),
  // kPermissionDenied, kNotFound (unknown database), kInvalidArgument.
  [[nodiscard]] Result<void> Connect();
  bool connected() const { return conn_ != nullptr; }
  // The server's id of the current connection; 0 when not connected.
  uint64_t connection_id() const;

  // The sum of this connection's Handler_read_* session counters: how many index and row reads
  // the server did for it so far, this call's own SHOW STATUS included (take a difference of two
  // calls to cost a statement). For tests and benchmarks of the claim's cost.
  [[nodiscard]] Result<int64_t> RowsRead();

  [[nodiscard]] Result<CommitWrite> CommitCommand(
      const CommitRequest& request, const CallerStatements& caller_statements) override;
  [[nodiscard]] Result<std::optional<FoundCommand>> FindCommand(
      const std::string& command_id) override;
  [[nodiscard]] Result<Claim> ClaimDue(const ClaimOptions& options) override;
  [[nodiscard]] Result<size_t> MarkPublished(const std::string& token,
                                             std::span<const int64_t> ids) override;
  [[nodiscard]] Result<size_t> MarkFailed(const std::string& token,
                                          std::span<const FailedAttempt> attempts) override;
  [[nodiscard]] Result<size_t> MarkParked(const std::string& token,
                                          std::span<const FailedAttempt> attempts) override;
  [[nodiscard]] Result<size_t> Release(const std::string& token,
                                       std::span<const int64_t> ids) override;
  [[nodiscard]] Result<OutboxStats> Stats() override;

 private:
  // Runs `body` on a live connection; applies the drop-on-unavailable policy to its result.
  template <class Body>
  auto WithConnection(Body&& body) -> decltype(body(std::declval<MariaDbConnection&>()));
  // Begin, `body`, Commit; rolls back when `body` or the commit fails.
  template <class Body>
  auto InTransaction(MariaDbConnection& conn, Body&& body) -> decltype(body());
  // Best-effort ROLLBACK; when even that fails the connection is dropped after the call.
  void Abort(MariaDbConnection& conn);
  [[nodiscard]] Result<MariaDbConnection*> Live();

  // UPDATE `set_clause` WHERE claim_token=? AND status='pending' AND id IN (...), for every id,
  // in fixed-size chunks (one transaction when there is more than one chunk).
  [[nodiscard]] Result<size_t> UpdateHeld(MariaDbConnection& conn, std::string_view name,
                                          std::string_view set_clause,
                                          std::vector<SqlValue> set_params,
                                          const std::string& token, std::span<const int64_t> ids);
  // Runs the prepared statement `name` (`sql`) once per attempt with params_of(attempt), all in
  // one transaction when there is more than one; returns the rows changed.
  template <class ParamsOf>
  [[nodiscard]] Result<size_t> UpdateEachAttempt(std::string_view name, std::string_view sql,
                                                 std::span<const FailedAttempt> attempts,
                                                 ParamsOf&& params_of);

  MysqlOptions options_;
  std::unique_ptr<MariaDbConnection> conn_;
  bool drop_after_call_ = false;
  std::chrono::steady_clock::time_point last_used_{};
};

// Runs `body` on a live connection; drops the connection after a kUnavailable failure.
template <class Body>
auto MariaDbOutboxStore::WithConnection(Body&& body)
    -> decltype(body(std::declval<MariaDbConnection&>())) {
  auto conn = Live();
  if (!conn) {
    return Fail(conn.error());
  }
  drop_after_call_ = false;
  auto result = body(**conn);
  if ((!result && result.error().code == ErrorCode::kUnavailable) || drop_after_call_) {
    conn_.reset();
  } else {
    last_used_ = std::chrono::steady_clock::now();
  }
  drop_after_call_ = false;
  return result;
}

template <class Body>
auto MariaDbOutboxStore::InTransaction(MariaDbConnection& conn, Body&& body) -> decltype(body()) {
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

// A store that connects on its first call (or on Connect()).
[[nodiscard]] std::unique_ptr<MariaDbOutboxStore> MakeMariaDbOutboxStore(
    const MysqlOptions& options);

}  // namespace room_outbox
