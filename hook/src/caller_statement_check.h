// Which caller statements the commit's transaction refuses: those that end it or commit it
// implicitly, and so would commit the command log row without its outbox rows (the outbox rows
// are written after the statements callback, in the same transaction).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace room_outbox::internal {

// Why `sql` may not run inside the commit's transaction, or nullopt when it may. Refused:
// transaction control (COMMIT, ROLLBACK, BEGIN, START TRANSACTION, XA, SET autocommit), data
// definition and the other statements that commit implicitly (CREATE, ALTER, DROP, TRUNCATE,
// RENAME, LOCK/UNLOCK TABLES, GRANT, REVOKE, FLUSH, ANALYZE, OPTIMIZE, REPAIR, CACHE INDEX, LOAD
// INDEX, INSTALL, UNINSTALL, RESET, PURGE, CHANGE, SHUTDOWN). The verb is read after leading
// blanks, comments and parentheses; the text of an executable comment (`/*!` or `/*M!`) counts
// as the statement's own. A statement that ends the transaction some other way (a procedure
// that commits) is caught after the callback: the commit checks that its transaction is open.
std::optional<std::string> RefusedCallerStatement(std::string_view sql);

}  // namespace room_outbox::internal
