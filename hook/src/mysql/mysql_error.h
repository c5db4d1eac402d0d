// The one mapping from MariaDB client and server error numbers to the project's ErrorCode.
#pragma once

#include <string_view>

#include "room_outbox/error.h"

namespace room_outbox {

// Builds "<where>: <text> [errno <err>]" with the code that carries the retry decision:
//   connection lost/refused/killed, server shutting down, too many connections -> kUnavailable
//   deadlock, lock wait timeout (the transaction can simply be run again)      -> kUnavailable
//   duplicate key                                                               -> kAlreadyExists
//   access denied (user, database, table, column, privilege)                   -> kPermissionDenied
//   unknown database or table                                                   -> kNotFound
//   max_statement_time exceeded                                                 -> kDeadlineExceeded
//   anything else                                                               -> kInternal
// `where` names the call and the statement, e.g. "mysql_stmt_execute(claim_due)". The library's
// text never holds the password (an access-denied text says only "using password: YES").
Error FromMysqlErrno(unsigned err, std::string_view where, std::string_view text);

}  // namespace room_outbox
