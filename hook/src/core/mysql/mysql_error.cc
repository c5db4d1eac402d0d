#include "core/mysql/mysql_error.h"

#include <errmsg.h>
#include <mysqld_error.h>

#include <string>

namespace room_outbox {
namespace {

ErrorCode CodeFor(unsigned err) {
  switch (err) {
    // The connection is unusable or could not be made; a new connection may succeed.
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
      return ErrorCode::kUnavailable;
    // InnoDB gave up on a lock; running the transaction again at once is the documented remedy.
    // The connection is fine.
    case ER_LOCK_DEADLOCK:
    case ER_LOCK_WAIT_TIMEOUT:
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
      return ErrorCode::kPermissionDenied;
    case ER_BAD_DB_ERROR:
    case ER_NO_SUCH_TABLE:
      return ErrorCode::kNotFound;
    case ER_STATEMENT_TIMEOUT:
      return ErrorCode::kDeadlineExceeded;
    default:
      return ErrorCode::kInternal;
  }
}

}  // namespace

Error FromMysqlErrno(unsigned err, std::string_view where, std::string_view text) {
  std::string message;
  message.reserve(where.size() + text.size() + 24);
  message.append(where);
  message.append(": ");
  message.append(text.empty() ? std::string_view("unknown error") : text);
  message.append(" [errno ");
  message.append(std::to_string(err));
  message.append("]");
  return Error{CodeFor(err), std::move(message)};
}

}  // namespace room_outbox
