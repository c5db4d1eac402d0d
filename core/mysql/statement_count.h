// The database statements this process has sent: every prepared statement executed and every
// text statement (session settings, transaction control, SHOW), over every connection of the
// process. That is what the server counts as Questions; pings, prepares and connects are not
// counted. The relay shows it as room_outbox_db_statements_total, so an operator (or a test)
// can see what load the process puts on the database without reading the server's global
// counters, which every other client moves too.
//
// Thread-safety: any thread. One relaxed atomic increment per statement.
#pragma once

#include <cstdint>

namespace room_outbox::core {

// Statements sent by this process so far.
uint64_t StatementsSent();

// Counts one statement sent (the connection and its prepared statements call it).
void CountStatementSent();

}  // namespace room_outbox::core
