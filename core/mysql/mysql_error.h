// The one mapping from MariaDB and MySQL client and server error numbers to the project's
// ErrorCode. Both servers' numbers map to the same classes.
#pragma once

#include <string_view>

#include "room_outbox/error.h"

namespace room_outbox::core {

// Builds "<where>: <text> [errno <err>]" with the code that carries the retry decision:
//   kUnavailable: connection lost, refused or killed (MySQL also 3169, and 4031 for an idle
//                 connection the server closed); server shutting down; too many connections;
//                 server read-only (1290, 1836, and 1792 for a read-only transaction: follow a
//                 failover) or offline_mode (3032); a Galera node not ready (1047). The owner
//                 drops the connection.
//   kAborted: deadlock or lock wait timeout (1213, 1205), group replication's rollback (3100,
//             3101): rerun the transaction at once on the same connection. A cluster's
//             certification conflict at COMMIT is a 1213 too: nothing was committed.
//   kAlreadyExists: duplicate key
//   kPermissionDenied: access denied (user, database, table, column, privilege); the client's
//                      TLS refused the server (2026: no TLS offered where ssl_mode requires it,
//                      or a certificate that does not verify)
//   kNotFound: unknown database or table
//   kDeadlineExceeded: MariaDB's max_statement_time (1969) or MySQL's max_execution_time (3024)
//   kInternal: anything else
// `where` names the call and the statement, e.g. "mysql_stmt_execute(claim_due)". The library's
// text never holds the password (an access-denied text says only "using password: YES").
// A read-only refusal says so after `where`: "<where>: database is read-only: <text> [errno N]"
// (1836, 1792, and 1290 when its text names a read-only option: 1290 is the server's "running
// with the --X option" refusal of any option).
[[nodiscard]] Error FromMysqlErrno(unsigned err, std::string_view where, std::string_view text);

// What a read-only refusal's message carries (and nothing else of FromMysqlErrno's does).
inline constexpr std::string_view kReadOnlyRefusal = "database is read-only";

// True when `error` (or the error it wraps) is a server's refusal to write because it is
// read-only: a replica, or a primary demoted in a failover. The server answered: the statement
// (a COMMIT too) did not take effect, and the connection is dropped like any kUnavailable one,
// so the next call may reach the new primary.
[[nodiscard]] bool IsReadOnlyRefusal(const Error& error);
// True when `error` is a deadlock (1213; a cluster's certification conflict too): the server
// rolled the whole transaction back the moment it found it, so running it again at once costs
// one more try. A lock wait timeout (1205), kAborted as well, has already waited the whole lock
// wait: not this.
[[nodiscard]] bool IsDeadlock(const Error& error);

}  // namespace room_outbox::core
