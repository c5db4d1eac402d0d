// The SQL dialect of one connection: which server answered (its vendor and version, read from
// the handshake right after connect) and which statement set of outbox_sql.h the store sends it,
// with the capabilities the code asks about. Code asks capabilities, never versions.
//
// Versions compare only within a vendor: MariaDB 10.6 reports 100600, above every MySQL 8 number.
// A server below its vendor's minimum (no SKIP LOCKED: MySQL 5.7, MariaDB before 10.6) is refused
// at connect, naming the version found and the one required. MysqlOptions::dialect may force a
// statement set; the minimum of the server actually reached still applies.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/result.h"
#include "room_outbox/options.h"

namespace room_outbox::core {

enum class ServerVendor { kMariaDb, kMySql };

// What the handshake said. number is major * 10000 + minor * 100 + patch (Connector/C strips
// the "5.5.5-" prefix MariaDB sends to old clients).
struct ServerVersion {
  ServerVendor vendor = ServerVendor::kMariaDb;
  uint64_t number = 0;
};

// The oldest servers the store runs on: the first with FOR UPDATE SKIP LOCKED (and, for
// MariaDB, INSERT ... RETURNING).
inline constexpr uint64_t kMinMariaDbVersion = 100600;  // 10.6.0
inline constexpr uint64_t kMinMySqlVersion = 80001;     // 8.0.1

// The statement sets of outbox_sql.h.
enum class StatementSet { kMariaDb, kMySql };

struct Dialect {
  ServerVersion server;
  StatementSet statements = StatementSet::kMariaDb;
  // INSERT ... RETURNING: the commit reads the server's clock, the per-room check and the new
  // row ids from its inserts. Without it (the MySQL set) one SELECT after the inserts reads them.
  bool returning = true;
};

// "MariaDB 10.11.19", "MySQL 8.0.36".
std::string ServerVersionText(const ServerVersion& server);
// "mariadb", "mysql": the spelling of [mysql] dialect.
const char* StatementSetName(StatementSet set);

// The dialect for `server` as `requested` asks. Errors: kInvalidArgument when the server is below
// its vendor's minimum (the message names both versions).
[[nodiscard]] Result<Dialect> ChooseDialect(const ServerVersion& server, SqlDialect requested);

// What a server's handshake says: `is_mariadb` from mariadb_connection(), `number` from
// mysql_get_server_version().
ServerVersion ServerVersionOf(bool is_mariadb, uint64_t number);

}  // namespace room_outbox::core
