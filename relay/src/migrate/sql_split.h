// Splitting a schema file into the statements a server runs one at a time: ';' ends a statement
// outside quotes ('...', "...", `...`) and comments (-- and # to the end of the line, /* ... */).
// Comments are dropped; a piece with nothing but white space is no statement.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace room_outbox::relay::migrate {

std::vector<std::string> SplitSqlStatements(std::string_view text);

}  // namespace room_outbox::relay::migrate
