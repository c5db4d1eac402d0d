#include "core/mysql/connection.h"

#include <algorithm>

#include "core/mysql/mysql_error.h"

namespace room_outbox {
namespace {

// Where a connection goes, for error texts: never the password.
std::string Target(const MysqlOptions& options) {
  std::string where = options.user + "@";
  if (!options.socket.empty()) {
    where += "unix:" + options.socket;
  } else {
    where += options.host + ":" + std::to_string(options.port);
  }
  return where + "/" + options.database;
}

template <class T>
Result<void> SetOption(MYSQL* mysql, mysql_option option, const T* value, const char* name) {
  if (mysql_options(mysql, option, value) != 0) {
    return Fail(ErrorCode::kInvalidArgument,
                std::string("mysql_options(") + name + "): rejected by the client library");
  }
  return {};
}

unsigned int CeilSeconds(std::chrono::milliseconds ms) {
  const auto seconds = (std::max<int64_t>(ms.count(), 1) + 999) / 1000;
  return static_cast<unsigned int>(std::min<int64_t>(seconds, 3600));
}

}  // namespace

Result<std::unique_ptr<MariaDbConnection>> MariaDbConnection::Connect(const MysqlOptions& options) {
  MysqlPtr mysql{mysql_init(nullptr)};
  if (!mysql) {
    return Fail(ErrorCode::kInternal, "mysql_init: out of memory");
  }
  const unsigned int connect_timeout =
      CeilSeconds(options.connect_timeout.count() > 0 ? options.connect_timeout
                                                      : std::chrono::milliseconds(5000));
  const unsigned int io_timeout = static_cast<unsigned int>(kIoTimeout.count());
  const unsigned int protocol = options.socket.empty() ? MYSQL_PROTOCOL_TCP : MYSQL_PROTOCOL_SOCKET;
  const unsigned int no_local_infile = 0;
  for (auto set : {
           SetOption(mysql.get(), MYSQL_OPT_CONNECT_TIMEOUT, &connect_timeout,
                     "MYSQL_OPT_CONNECT_TIMEOUT"),
           SetOption(mysql.get(), MYSQL_OPT_READ_TIMEOUT, &io_timeout, "MYSQL_OPT_READ_TIMEOUT"),
           SetOption(mysql.get(), MYSQL_OPT_WRITE_TIMEOUT, &io_timeout, "MYSQL_OPT_WRITE_TIMEOUT"),
           SetOption(mysql.get(), MYSQL_OPT_PROTOCOL, &protocol, "MYSQL_OPT_PROTOCOL"),
           SetOption(mysql.get(), MYSQL_OPT_LOCAL_INFILE, &no_local_infile,
                     "MYSQL_OPT_LOCAL_INFILE"),
           SetOption(mysql.get(), MYSQL_SET_CHARSET_NAME, "utf8mb4", "MYSQL_SET_CHARSET_NAME"),
       }) {
    if (!set) {
      return Fail(set.error());
    }
  }
  const char* password = options.password.empty() ? nullptr : options.password.c_str();
  const char* socket = options.socket.empty() ? nullptr : options.socket.c_str();
  const char* host = options.socket.empty() ? options.host.c_str() : nullptr;
  // CLIENT_FOUND_ROWS: an UPDATE reports the rows it matched, which is what the mark calls
  // count. No CLIENT_MULTI_STATEMENTS: one statement per call.
  if (mysql_real_connect(mysql.get(), host, options.user.c_str(), password,
                         options.database.c_str(), socket ? 0 : options.port, socket,
                         CLIENT_FOUND_ROWS) == nullptr) {
    return Fail(FromMysqlErrno(mysql_errno(mysql.get()),
                               "mysql_real_connect(" + Target(options) + ")",
                               mysql_error(mysql.get())));
  }
  std::unique_ptr<MariaDbConnection> conn(new MariaDbConnection(std::move(mysql)));
  if (auto r =
          conn->Run("session_isolation", "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED");
      !r) {
    return Fail(r.error());
  }
  // The store's times come from UNIX_TIMESTAMP(NOW(3)) (outbox_sql.h): in UTC it has no DST
  // gap or repeat to resolve.
  if (auto r = conn->Run("session_time_zone", "SET SESSION time_zone = '+00:00'"); !r) {
    return Fail(r.error());
  }
  // Strict: a value that does not fit its column is an error, never silently truncated or
  // replaced (commit_checks.h refuses such input first; this is the database's own guard).
  // Appended to the server's modes, which stay as configured.
  if (auto r = conn->Run("session_sql_mode",
                         "SET SESSION sql_mode = CONCAT_WS(',', NULLIF(@@SESSION.sql_mode, ''), "
                         "'STRICT_ALL_TABLES,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,"
                         "ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION')");
      !r) {
    return Fail(r.error());
  }
  if (auto r = conn->Run("session_lock_wait", "SET SESSION innodb_lock_wait_timeout = " +
                                                  std::to_string(kLockWaitTimeoutSeconds));
      !r) {
    return Fail(r.error());
  }
  return conn;
}

MariaDbConnection::~MariaDbConnection() {
  // Statements first: they belong to the handle closed after them.
  statements_.clear();
  caller_statements_.clear();
}

Result<void> MariaDbConnection::Run(std::string_view where, std::string_view sql) {
  if (mysql_real_query(mysql_.get(), sql.data(), sql.size()) != 0) {
    return Fail(FromMysqlErrno(mysql_errno(mysql_.get()),
                               "mysql_real_query(" + std::string(where) + ")",
                               mysql_error(mysql_.get())));
  }
  if (mysql_field_count(mysql_.get()) != 0) {
    // Not expected from the statements run here, but a result must be consumed to keep the
    // connection in sync.
    MysqlResPtr res{mysql_store_result(mysql_.get())};
    if (!res) {
      return Fail(FromMysqlErrno(mysql_errno(mysql_.get()),
                                 "mysql_store_result(" + std::string(where) + ")",
                                 mysql_error(mysql_.get())));
    }
  }
  return {};
}

Result<void> MariaDbConnection::Ping() {
  if (mysql_ping(mysql_.get()) != 0) {
    return Fail(FromMysqlErrno(mysql_errno(mysql_.get()), "mysql_ping", mysql_error(mysql_.get())));
  }
  return {};
}

Result<void> MariaDbConnection::Begin() { return Run("begin", "START TRANSACTION"); }
Result<void> MariaDbConnection::Commit() { return Run("commit", "COMMIT"); }
Result<void> MariaDbConnection::Rollback() { return Run("rollback", "ROLLBACK"); }

Result<PreparedStatement*> MariaDbConnection::Prepared(std::string_view name,
                                                       std::string_view sql) {
  if (auto it = statements_.find(name); it != statements_.end()) {
    return it->second.get();
  }
  auto stmt = PreparedStatement::Prepare(mysql_.get(), std::string(name), sql);
  if (!stmt) {
    return Fail(stmt.error());
  }
  PreparedStatement* raw = stmt->get();
  statements_.emplace(std::string(name), std::move(*stmt));
  return raw;
}

Result<PreparedStatement*> MariaDbConnection::PreparedCallerStatement(std::string_view sql) {
  if (auto it = caller_statements_.find(sql); it != caller_statements_.end()) {
    return it->second.get();
  }
  auto stmt = PreparedStatement::Prepare(mysql_.get(), "caller_statement", sql);
  if (!stmt) {
    return Fail(stmt.error());
  }
  if (caller_statements_.size() >= kMaxCallerStatements) {
    caller_statements_.clear();  // a host with many texts pays the prepares it paid before
  }
  PreparedStatement* raw = stmt->get();
  caller_statements_.emplace(std::string(sql), std::move(*stmt));
  return raw;
}

Result<std::unique_ptr<PreparedStatement>> MariaDbConnection::Prepare(std::string name,
                                                                      std::string_view sql) {
  auto stmt = PreparedStatement::Prepare(mysql_.get(), std::move(name), sql);
  if (stmt) {
  }
  return stmt;
}

uint64_t MariaDbConnection::ConnectionId() const { return mysql_thread_id(mysql_.get()); }

}  // namespace room_outbox
