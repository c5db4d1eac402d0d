// MariaDbConnection: one client connection (MariaDB Connector/C, to a MariaDB or MySQL server)
// with its dialect, its session settings and its prepared statements.
//
// Connect: the options of connect_options.h (timeouts, protocol, TLS), then the server's
// handshake decides the dialect (dialect.h: a server below its minimum version is refused), then
// the session is set up. The statements of outbox_sql.h are asked for by id and come in the
// connection's statement set.
//
// Session: READ COMMITTED (a claim's locking reads see the latest committed rows and lock only
// what they return), innodb_lock_wait_timeout of a few seconds (a blocked write fails fast and
// is retried instead of stalling the relay), time_zone '+00:00' (the store's times are the
// server's UNIX_TIMESTAMP(NOW(3)) in milliseconds; in UTC that has no DST gap or repeat, and a
// server whose system time zone changes does not shift them), utf8mb4, read/write timeouts so a
// hung server cannot block a call forever. MYSQL_OPT_RECONNECT stays off: a silent reconnect would
// lose the open transaction and its locks. When a call fails with kUnavailable the owner drops the
// whole connection (statements included) and connects anew on its next call.
//
// Not thread-safe. Non-movable: prepared statements point at the MYSQL handle.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/mysql/dialect.h"
#include "core/mysql/mysql_handles.h"
#include "core/mysql/outbox_sql.h"
#include "core/mysql/statement.h"
#include "core/result.h"
#include "room_outbox/options.h"

namespace room_outbox::core {

class MariaDbConnection {
 public:
  // innodb_lock_wait_timeout of the session, in seconds.
  static constexpr int kLockWaitTimeoutSeconds = sql::kLockWaitTimeoutSeconds;

  // Connects over options.socket when set, else TCP to host:port, with the TLS of
  // options.ssl_mode, reads the dialect from the handshake and sets up the session. Errors:
  // kUnavailable (unreachable), kPermissionDenied (credentials; TLS required but not offered),
  // kInvalidArgument (a server below the minimum version; options the library refuses), ...
  [[nodiscard]] static Result<std::unique_ptr<MariaDbConnection>> Connect(
      const MysqlOptions& options);

  MariaDbConnection(const MariaDbConnection&) = delete;
  MariaDbConnection& operator=(const MariaDbConnection&) = delete;
  ~MariaDbConnection();

  [[nodiscard]] Result<void> Ping();
  [[nodiscard]] Result<void> Begin();
  [[nodiscard]] Result<void> Commit();
  [[nodiscard]] Result<void> Rollback();

  const Dialect& dialect() const { return dialect_; }

  // Statement `id` (an entry of outbox_sql.h) at size `n` (statement_text.h), in this connection's
  // statement set: prepared on first use and reused afterwards. The pointer stays valid as long as
  // this connection. The lookup makes no allocation once the statement is there. kInternal when the
  // set has no such statement.
  [[nodiscard]] Result<PreparedStatement*> Prepared(const sql::Statement& id, size_t n = 0);
  // Runs statement `id` (no parameters; prepared as Prepared does) and returns its one result
  // row; kInternal naming the statement when it returned another number of rows.
  [[nodiscard]] Result<ResultRow> QueryOneRow(const sql::Statement& id);
  // Prepares each of `ids` in the set (at its smallest size) now, so a statement the server
  // cannot parse fails here rather than at its first use. Statements outside the set are skipped.
  [[nodiscard]] Result<void> PrepareNow(std::span<const sql::Statement* const> ids);
  // A statement of the caller's own (tests, benchmarks) named `name`, prepared from `sql` on
  // first use and reused afterwards. The pointer stays valid as long as this connection.
  [[nodiscard]] Result<PreparedStatement*> Prepared(std::string_view name, std::string_view sql);
  // A caller's own statement (CommitCommand's caller_statements), keyed by its SQL text:
  // prepared on first use and reused by later commits, so a host that runs the same statements
  // every command pays no prepare round trip. At most kMaxCallerStatements texts are kept; a new
  // text beyond that empties the cache first. The pointer is valid until the next call.
  [[nodiscard]] Result<PreparedStatement*> PreparedCallerStatement(std::string_view sql);
  static constexpr size_t kMaxCallerStatements = 64;
  // Statement `id` (size 0) prepared for one use, not cached: for a statement whose plan the
  // server must choose at each execution (MariaDB re-executes a prepared statement without
  // re-choosing some access paths, such as a loose index scan inside a CTE).
  [[nodiscard]] Result<std::unique_ptr<PreparedStatement>> PrepareOnce(const sql::Statement& id);
  // A statement prepared for one use; not cached.
  [[nodiscard]] Result<std::unique_ptr<PreparedStatement>> Prepare(std::string name,
                                                                   std::string_view sql);

  // A statement without parameters, sent as text (DDL, SHOW): every row of its result as text,
  // NULL as nullopt. `where` names it in errors.
  using TextRow = std::vector<std::optional<std::string>>;
  [[nodiscard]] Result<std::vector<TextRow>> QueryText(std::string_view where,
                                                       std::string_view sql);

  // The server's error number of the last call on this connection that failed (0: none), for
  // callers that tell one server error from another (a migration's "already applied").
  unsigned LastErrno() const { return mysql_errno(mysql_.get()); }

  // The server's id for this connection (what KILL and information_schema.processlist use).
  uint64_t ConnectionId() const;

  // Whether a transaction is open, as the server reported with its last answer
  // (SERVER_STATUS_IN_TRANS): false after a COMMIT, an implicit commit or a rollback.
  bool InTransaction() const;

 private:
  MariaDbConnection(MysqlPtr mysql, Dialect dialect)
      : mysql_(std::move(mysql)), dialect_(dialect) {}
  // Isolation, time zone, sql_mode, lock wait timeout.
  [[nodiscard]] Result<void> SetUpSession();
  // Statement `id`, sent as text: no parameters, no result (session settings, transaction
  // control).
  [[nodiscard]] Result<void> Run(const sql::Statement& id);

  // Declared first so it is destroyed last, after the statements that refer to it.
  // Lets the statement map be searched by string_view without building a std::string.
  struct NameHash {
    using is_transparent = void;
    size_t operator()(std::string_view name) const { return std::hash<std::string_view>{}(name); }
  };

  MysqlPtr mysql_;
  Dialect dialect_;
  // outbox_sql.h's statements by (id, size).
  // outbox_sql.h's statements, by entry and size.
  struct EntryKey {
    const sql::Statement* entry;
    size_t n;
    bool operator==(const EntryKey&) const = default;
  };
  struct EntryKeyHash {
    size_t operator()(const EntryKey& key) const {
      return std::hash<const void*>{}(key.entry) ^ (key.n * 0x9e3779b97f4a7c15ULL);
    }
  };
  std::unordered_map<EntryKey, std::unique_ptr<PreparedStatement>, EntryKeyHash> table_statements_;
  std::unordered_map<std::string, std::unique_ptr<PreparedStatement>, NameHash, std::equal_to<>>
      statements_;
  std::unordered_map<std::string, std::unique_ptr<PreparedStatement>, NameHash, std::equal_to<>>
      caller_statements_;
};

}  // namespace room_outbox::core
