#include "core/mysql/mysql_error.h"

#include <errmsg.h>
#include <mysqld_error.h>

#include <string>

namespace room_outbox::core {
namespace {

// MySQL 8 server error numbers that MariaDB's mysqld_error.h does not name (or names otherwise).
// The numbers MariaDB uses differently are never raised by a statement of the store: 3024 is
// unused there, 4031 is a CREATE TRIGGER ... FOLLOWS error (a caller statement that raised it
// would cost one reconnect).
enum MysqlOnlyErrno : unsigned {
  kMysqlUnknownComError = 1047,  // Galera: "WSREP has not yet prepared node for application use"
  kMysqlQueryTimeout = 3024,     // max_execution_time exceeded
  kMysqlRunHookError = 3100,     // group replication refused the commit (before_commit hook)
  kMysqlRollbackDuringCommit = 3101,      // group replication rolled the transaction back
  kMysqlSessionWasKilled = 3169,          // KILL of the session
  kMysqlClientInteractionTimeout = 4031,  // the server closed an idle connection (8.0.24+)
};

// The connection is unusable or could not be made; a new connection may succeed.
bool IsConnectionClass(unsigned err) {
  switch (err) {
    case CR_SOCKET_CREATE_ERROR:
    case CR_CONNECTION_ERROR:
    case CR_CONN_HOST_ERROR:
    case CR_IPSOCK_ERROR:
    case CR_UNKNOWN_HOST:
    case CR_SERVER_GONE_ERROR:
    case CR_SERVER_HANDSHAKE_ERR:
    case CR_SERVER_LOST:
    case CR_SERVER_LOST_EXTENDED:
    case CR_ERR_NET_READ:
    case CR_ERR_NET_WRITE:
    case ER_CON_COUNT_ERROR:
    case ER_TOO_MANY_USER_CONNECTIONS:
    case ER_SERVER_SHUTDOWN:
    case ER_NET_READ_ERROR:
    case ER_NET_READ_INTERRUPTED:
    case ER_NET_ERROR_ON_WRITE:
    case ER_NET_WRITE_INTERRUPTED:
    case ER_CONNECTION_KILLED:
    case ER_QUERY_INTERRUPTED:
    // A read-only server (a replica, or a primary demoted in a failover): only a new connection
    // can reach the new primary.
    case ER_OPTION_PREVENTS_STATEMENT:
    case ER_READ_ONLY_MODE:
    // MySQL: a write in a transaction the session made read-only (transaction_read_only, as a
    // proxy or a replica's defaults may set it); a new connection may be a writable one.
    case ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION:
    // MySQL: the idle connection was closed, the session was killed, the server is in
    // offline_mode (it accepts no client but admins: a new connection may reach another one).
    case kMysqlClientInteractionTimeout:
    case kMysqlSessionWasKilled:
    case ER_SERVER_OFFLINE_MODE:
    // A Galera node that is not synced refuses every statement; another node may take it.
    case kMysqlUnknownComError:
      return true;
    default:
      return false;
  }
}

ErrorCode CodeFor(unsigned err) {
  if (IsConnectionClass(err)) {
    return ErrorCode::kUnavailable;
  }
  switch (err) {
    // InnoDB gave up on a lock; running the transaction again at once is the documented remedy.
    // The connection is fine.
    // Galera and Percona XtraDB Cluster report a certification conflict (two nodes wrote the same
    // row) as a deadlock, also at COMMIT; group replication uses its own two numbers. Either way
    // the transaction was rolled back and may run again.
    case ER_LOCK_DEADLOCK:
    case ER_LOCK_WAIT_TIMEOUT:
    case kMysqlRunHookError:
    case kMysqlRollbackDuringCommit:
      return ErrorCode::kAborted;
    case ER_DUP_KEY:
    case ER_DUP_ENTRY:
    case ER_DUP_UNIQUE:
    case ER_DUP_ENTRY_WITH_KEY_NAME:
      return ErrorCode::kAlreadyExists;
    case ER_DBACCESS_DENIED_ERROR:
    case ER_ACCESS_DENIED_ERROR:
    case ER_TABLEACCESS_DENIED_ERROR:
    case ER_COLUMNACCESS_DENIED_ERROR:
    case ER_SPECIFIC_ACCESS_DENIED_ERROR:
    case ER_ACCESS_DENIED_NO_PASSWORD_ERROR:
    // The client refused the server: no TLS where ssl_mode requires it, or a certificate that
    // does not verify.
    case CR_SSL_CONNECTION_ERROR:
      return ErrorCode::kPermissionDenied;
    case ER_BAD_DB_ERROR:
    case ER_NO_SUCH_TABLE:
      return ErrorCode::kNotFound;
    case ER_STATEMENT_TIMEOUT:  // MariaDB's max_statement_time
    case kMysqlQueryTimeout:    // MySQL's max_execution_time
      return ErrorCode::kDeadlineExceeded;
    default:
      return ErrorCode::kInternal;
  }
}

// 1290 names the option that refused the statement: --read-only, --super-read-only (MySQL),
// --skip-grant-tables, --secure-file-priv, ... Only the first two are a read-only server.
bool IsReadOnlyErrno(unsigned err, std::string_view text) {
  switch (err) {
    case ER_READ_ONLY_MODE:
    case ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION:
      return true;
    case ER_OPTION_PREVENTS_STATEMENT:
      return text.find("read-only") != std::string_view::npos ||
             text.find("read_only") != std::string_view::npos;
    default:
      return false;
  }
}

}  // namespace

Error FromMysqlErrno(unsigned err, std::string_view where, std::string_view text) {
  std::string message;
  message.reserve(where.size() + text.size() + kReadOnlyRefusal.size() + 26);
  message.append(where);
  message.append(": ");
  if (IsReadOnlyErrno(err, text)) {
    message.append(kReadOnlyRefusal);
    message.append(": ");
  }
  message.append(text.empty() ? std::string_view("unknown error") : text);
  message.append(" [errno ");
  message.append(std::to_string(err));
  message.append("]");
  return Error{CodeFor(err), std::move(message)};
}

bool IsDeadlock(const Error& error) {
  return error.code == ErrorCode::kAborted &&
         error.message.find("[errno 1213]") != std::string::npos;
}

bool IsReadOnlyRefusal(const Error& error) {
  return error.code == ErrorCode::kUnavailable &&
         error.message.find(kReadOnlyRefusal) != std::string::npos;
}

}  // namespace room_outbox::core
