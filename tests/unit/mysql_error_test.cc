// FromMysqlErrno: every mapped client and server error number, and the message format.
#include "core/mysql/mysql_error.h"

#include <errmsg.h>
#include <gtest/gtest.h>
#include <mysqld_error.h>

namespace room_outbox {
namespace {

struct Case {
  unsigned err;
  ErrorCode code;
};

TEST(MysqlErrorTest, MapsEachErrnoToItsCode) {
  const Case cases[] = {
      {CR_SERVER_GONE_ERROR, ErrorCode::kUnavailable},
      {CR_SERVER_LOST, ErrorCode::kUnavailable},
      {CR_CONNECTION_ERROR, ErrorCode::kUnavailable},
      {CR_CONN_HOST_ERROR, ErrorCode::kUnavailable},
      {CR_SOCKET_CREATE_ERROR, ErrorCode::kUnavailable},
      {CR_IPSOCK_ERROR, ErrorCode::kUnavailable},
      {CR_UNKNOWN_HOST, ErrorCode::kUnavailable},
      {CR_SERVER_HANDSHAKE_ERR, ErrorCode::kUnavailable},
      {CR_SERVER_LOST_EXTENDED, ErrorCode::kUnavailable},
      {CR_ERR_NET_READ, ErrorCode::kUnavailable},
      {CR_ERR_NET_WRITE, ErrorCode::kUnavailable},
      {ER_CONNECTION_KILLED, ErrorCode::kUnavailable},
      {ER_QUERY_INTERRUPTED, ErrorCode::kUnavailable},
      {ER_SERVER_SHUTDOWN, ErrorCode::kUnavailable},
      {ER_CON_COUNT_ERROR, ErrorCode::kUnavailable},
      {ER_TOO_MANY_USER_CONNECTIONS, ErrorCode::kUnavailable},
      {ER_NET_READ_ERROR, ErrorCode::kUnavailable},
      {ER_NET_READ_INTERRUPTED, ErrorCode::kUnavailable},
      {ER_NET_ERROR_ON_WRITE, ErrorCode::kUnavailable},
      {ER_NET_WRITE_INTERRUPTED, ErrorCode::kUnavailable},
      {ER_LOCK_DEADLOCK, ErrorCode::kAborted},
      {ER_OPTION_PREVENTS_STATEMENT, ErrorCode::kUnavailable},
      {ER_READ_ONLY_MODE, ErrorCode::kUnavailable},
      {ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION, ErrorCode::kUnavailable},
      {ER_LOCK_WAIT_TIMEOUT, ErrorCode::kAborted},
      {ER_DUP_ENTRY, ErrorCode::kAlreadyExists},
      {ER_DUP_ENTRY_WITH_KEY_NAME, ErrorCode::kAlreadyExists},
      {ER_DUP_KEY, ErrorCode::kAlreadyExists},
      {ER_DUP_UNIQUE, ErrorCode::kAlreadyExists},
      {ER_ACCESS_DENIED_ERROR, ErrorCode::kPermissionDenied},
      {ER_DBACCESS_DENIED_ERROR, ErrorCode::kPermissionDenied},
      {ER_TABLEACCESS_DENIED_ERROR, ErrorCode::kPermissionDenied},
      {ER_COLUMNACCESS_DENIED_ERROR, ErrorCode::kPermissionDenied},
      {ER_SPECIFIC_ACCESS_DENIED_ERROR, ErrorCode::kPermissionDenied},
      {ER_ACCESS_DENIED_NO_PASSWORD_ERROR, ErrorCode::kPermissionDenied},
      {CR_SSL_CONNECTION_ERROR, ErrorCode::kPermissionDenied},
      {ER_BAD_DB_ERROR, ErrorCode::kNotFound},
      {ER_NO_SUCH_TABLE, ErrorCode::kNotFound},
      {ER_STATEMENT_TIMEOUT, ErrorCode::kDeadlineExceeded},
      // MySQL 8's own numbers, in the same classes as MariaDB's.
      {4031, ErrorCode::kUnavailable},  // ER_CLIENT_INTERACTION_TIMEOUT: idle connection closed
      {3169, ErrorCode::kUnavailable},  // ER_SESSION_WAS_KILLED
      {3032, ErrorCode::kUnavailable},  // ER_SERVER_OFFLINE_MODE
      {1047, ErrorCode::kUnavailable},  // Galera: node not ready for application use
      {3024, ErrorCode::kDeadlineExceeded},  // ER_QUERY_TIMEOUT: max_execution_time
      {3100, ErrorCode::kAborted},           // ER_RUN_HOOK_ERROR: group replication refused
      {3101, ErrorCode::kAborted},  // ER_TRANSACTION_ROLLBACK_DURING_COMMIT: group replication
      {ER_PARSE_ERROR, ErrorCode::kInternal},
      {ER_BAD_FIELD_ERROR, ErrorCode::kInternal},
      {CR_COMMANDS_OUT_OF_SYNC, ErrorCode::kInternal},
      {CR_OUT_OF_MEMORY, ErrorCode::kInternal},
      {0, ErrorCode::kInternal},
  };
  for (const Case& c : cases) {
    Error e = core::FromMysqlErrno(c.err, "where", "text");
    EXPECT_EQ(ErrorCodeName(e.code), ErrorCodeName(c.code)) << "errno " << c.err;
  }
}

TEST(MysqlErrorTest, RetryableOnlyForConnectionAndLockErrors) {
  EXPECT_TRUE(IsRetryable(core::FromMysqlErrno(CR_SERVER_LOST, "w", "t")));
  EXPECT_TRUE(IsRetryable(core::FromMysqlErrno(ER_LOCK_DEADLOCK, "w", "t")));
  EXPECT_TRUE(IsRetryable(core::FromMysqlErrno(ER_LOCK_WAIT_TIMEOUT, "w", "t")));
  EXPECT_TRUE(IsRetryable(core::FromMysqlErrno(4031, "w", "t")));
  EXPECT_TRUE(IsRetryable(core::FromMysqlErrno(3101, "w", "t")));
  EXPECT_FALSE(IsRetryable(core::FromMysqlErrno(ER_DUP_ENTRY, "w", "t")));
  EXPECT_FALSE(IsRetryable(core::FromMysqlErrno(ER_ACCESS_DENIED_ERROR, "w", "t")));
  EXPECT_FALSE(IsRetryable(core::FromMysqlErrno(ER_PARSE_ERROR, "w", "t")));
}

TEST(MysqlErrorTest, MessageNamesTheCallTheLibraryTextAndTheErrno) {
  Error e = core::FromMysqlErrno(ER_LOCK_WAIT_TIMEOUT, "mysql_stmt_execute(claim_due)",
                                 "Lock wait timeout exceeded; try restarting transaction");
  EXPECT_EQ(e.message,
            "mysql_stmt_execute(claim_due): Lock wait timeout exceeded; try restarting "
            "transaction [errno 1205]");
}

TEST(MysqlErrorTest, EmptyLibraryTextStillSaysSomething) {
  Error e = core::FromMysqlErrno(CR_SERVER_LOST, "mysql_ping", "");
  EXPECT_EQ(e.message, "mysql_ping: unknown error [errno 2013]");
}

TEST(MysqlErrorTest, ReadOnlyRefusalsSaySoAndAreToldApart) {
  struct ReadOnlyCase {
    unsigned err;
    const char* text;
    bool read_only;
  };
  const ReadOnlyCase cases[] = {
      {ER_OPTION_PREVENTS_STATEMENT,
       "The MariaDB server is running with the --read-only option so it cannot execute this "
       "statement",
       true},
      {ER_OPTION_PREVENTS_STATEMENT,
       "The MySQL server is running with the --super-read-only option so it cannot execute this "
       "statement",
       true},
      {ER_READ_ONLY_MODE, "Running in read-only mode", true},
      {ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION,
       "Cannot execute statement in a READ ONLY transaction", true},
      // 1290 for another option: kUnavailable still, but not a read-only server.
      {ER_OPTION_PREVENTS_STATEMENT,
       "The MariaDB server is running with the --secure-file-priv option so it cannot execute "
       "this statement",
       false},
      {CR_SERVER_LOST, "Lost connection to server during query", false},
      {ER_LOCK_DEADLOCK, "Deadlock found when trying to get lock", false},
  };
  for (const ReadOnlyCase& c : cases) {
    Error e = core::FromMysqlErrno(c.err, "mysql_stmt_execute(lease_1)", c.text);
    EXPECT_EQ(core::IsReadOnlyRefusal(e), c.read_only) << c.err << " " << c.text;
    EXPECT_EQ(e.message.find("database is read-only") != std::string::npos, c.read_only)
        << e.message;
  }
  Error refused = core::FromMysqlErrno(ER_READ_ONLY_MODE, "mysql_real_query(commit)",
                                       "Running in read-only mode");
  EXPECT_EQ(refused.message,
            "mysql_real_query(commit): database is read-only: Running in read-only mode "
            "[errno 1836]");
  // Wrapped by a caller (the hook's lookup, a composed message): still told.
  EXPECT_TRUE(
      core::IsReadOnlyRefusal(Error{ErrorCode::kUnavailable, "commit failed: " + refused.message}));
  // Only a connection-class error is one: the phrase in another kind's text is not.
  EXPECT_FALSE(core::IsReadOnlyRefusal(Error{ErrorCode::kInternal, refused.message}));
}

// A deadlock, and only a deadlock, is a transaction the server rolled back at once: what a
// relay's mark runs again.
TEST(MysqlErrorTest, ADeadlockIsToldFromALockWaitTimeout) {
  const Error deadlock = core::FromMysqlErrno(
      ER_LOCK_DEADLOCK, "mysql_stmt_execute(rooms_progress_8)",
      "Deadlock found when trying to get lock; try restarting transaction");
  EXPECT_EQ(deadlock.code, ErrorCode::kAborted);
  EXPECT_TRUE(core::IsDeadlock(deadlock)) << deadlock.message;
  const Error timeout = core::FromMysqlErrno(ER_LOCK_WAIT_TIMEOUT, "mysql_stmt_execute(lease_8)",
                                             "Lock wait timeout exceeded");
  EXPECT_EQ(timeout.code, ErrorCode::kAborted);
  EXPECT_FALSE(core::IsDeadlock(timeout)) << timeout.message;
  EXPECT_FALSE(core::IsDeadlock(Error{ErrorCode::kInternal, deadlock.message}));
}

}  // namespace
}  // namespace room_outbox
