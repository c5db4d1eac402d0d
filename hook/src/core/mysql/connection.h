// MariaDbConnection: one client connection with its session settings and its prepared
// statements.
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
#include <string>
#include <string_view>
#include <unordered_map>

#include "core/mysql/mysql_handles.h"
#include "core/mysql/statement.h"
#include "core/result.h"
#include "room_outbox/options.h"

namespace room_outbox {

class MariaDbConnection {
 public:
  // How long a read or write on the socket may block before the call fails.
  static constexpr std::chrono::seconds kIoTimeout{30};
  // innodb_lock_wait_timeout of the session, in seconds.
  static constexpr int kLockWaitTimeoutSeconds = 5;

  // Connects over options.socket when set, else TCP to host:port, and sets up the session.
  [[nodiscard]] static Result<std::unique_ptr<MariaDbConnection>> Connect(
      const MysqlOptions& options);

  MariaDbConnection(const MariaDbConnection&) = delete;
  MariaDbConnection& operator=(const MariaDbConnection&) = delete;
  ~MariaDbConnection();

  [[nodiscard]] Result<void> Ping();
  [[nodiscard]] Result<void> Begin();
  [[nodiscard]] Result<void> Commit();
  [[nodiscard]] Result<void> Rollback();

  // The statement named `name`, prepared from `sql` on first use and reused afterwards. The
  // pointer stays valid as long as this connection.
  // The lookup makes no allocation once the statement is there.
  [[nodiscard]] Result<PreparedStatement*> Prepared(std::string_view name, std::string_view sql);
  // A caller's own statement (CommitCommand's caller_statements), keyed by its SQL text:
  // prepared on first use and reused by later commits, so a host that runs the same statements
  // every command pays no prepare round trip. At most kMaxCallerStatements texts are kept; a new
  // text beyond that empties the cache first. The pointer is valid until the next call.
  [[nodiscard]] Result<PreparedStatement*> PreparedCallerStatement(std::string_view sql);
  static constexpr size_t kMaxCallerStatements = 64;
  // A statement prepared for one use; not cached.
  [[nodiscard]] Result<std::unique_ptr<PreparedStatement>> Prepare(std::string name,
                                                                   std::string_view sql);

  // The server's id for this connection (what KILL and information_schema.processlist use).
  uint64_t ConnectionId() const;

 private:
  explicit MariaDbConnection(MysqlPtr mysql) : mysql_(std::move(mysql)) {}
  // A statement without parameters or result (session settings, transaction control).
  [[nodiscard]] Result<void> Run(std::string_view where, std::string_view sql);

  // Declared first so it is destroyed last, after the statements that refer to it.
  // Lets the statement map be searched by string_view without building a std::string.
  struct NameHash {
    using is_transparent = void;
    size_t operator()(std::string_view name) const { return std::hash<std::string_view>{}(name); }
  };

  MysqlPtr mysql_;
  std::unordered_map<std::string, std::unique_ptr<PreparedStatement>, NameHash, std::equal_to<>>
      statements_;
  std::unordered_map<std::string, std::unique_ptr<PreparedStatement>, NameHash, std::equal_to<>>
      caller_statements_;
};

}  // namespace room_outbox
