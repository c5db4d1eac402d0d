// The one mapping from MariaDB client and server error numbers to the project's ErrorCode.
#pragma once

#include <string_view>

#include "room_outbox/error.h"

namespace room_outbox {

// Builds "<where>: <text> [errno <err>]" with the code that carries the retry decision:
//   kUnavailable: connection lost, refused or killed; server shutting down; too many
//                 connections; server read-only (1290, 1836: follow a failover). The owner drops
//                 the connection.
//   kAborted: deadlock or lock wait timeout (1213, 1205): rerun the transaction at once on the
//             same connection
//   kAlreadyExists: duplicate key
//   kPermissionDenied: access denied (user, database, table, column, privilege)
//   kNotFound: unknown database or table
//   kDeadlineExceeded: max_statement_time exceeded
//   kInternal: anything else
// `where` names the call and the statement, e.g. "mysql_stmt_execute(claim_due)". The library's
// text never holds the password (an access-denied text says only "using password: YES").
[[nodiscard]] Error FromMysqlErrno(unsigned err, std::string_view where, std::string_view text);

}  // namespace room_outbox
