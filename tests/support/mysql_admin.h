// Lower-level MariaDB helpers shared by the test fixture (TestDatabase) and the benchmarks
// (BenchDatabase): a root connection over a unix socket, SQL text run with every result row
// collected, and a fresh database with schema/*.sql applied. They report errors as messages and
// record nothing with gtest, so a program that is not a test can use them.
#pragma once

#include <mysql.h>

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/mysql/mysql_handles.h"
#include "room_outbox/options.h"

namespace room_outbox::testing {

// One result row; NULL is nullopt.
using SqlRow = std::vector<std::optional<std::string>>;

// Connects as root (no password) over `socket` with multi-statement text allowed. Null, with
// `error` set, when it cannot.
core::MysqlPtr ConnectAsRoot(const std::string& socket, std::string& error);

// Runs SQL text (caller-controlled, possibly several statements) and appends the rows of every
// result to `rows`. Returns the first error ("" when none); rows read before it are kept. Error
// messages quote at most `quoted` characters of `sql`.
std::string RunSql(MYSQL* conn, const std::string& sql, std::vector<SqlRow>& rows,
                   size_t quoted = std::string::npos);

// schema/*.sql in file-name order.
std::vector<std::filesystem::path> SchemaFiles();

// Migrates database `name` on the server at `socket` to the latest schema through the code of
// `outbox-relay migrate` (relay/src/migrate), so every test database exercises it. Returns the
// first error or "".
std::string MigrateSchema(const std::string& socket, const std::string& name);

// Creates database `name` (utf8mb4, binary collation) on `conn`, the root connection to the
// server at `socket`, makes it current and migrates it. Returns the first error or "".
std::string CreateSchemaDatabase(MYSQL* conn, const std::string& socket, const std::string& name);

// The statement set every test and benchmark forces: ROOM_OUTBOX_TEST_MYSQL_DIALECT ("mysql",
// "mariadb" or "auto"; unset or empty: auto). `make test` runs the integration suite a second
// time with "mysql", so every statement of the MySQL set runs against the private MariaDB. An
// unknown value ends the process with a message.
SqlDialect TestDialect();

// Options reaching `database` as root over the unix socket `socket`, with TestDialect().
MysqlOptions RootOptions(const std::string& socket, const std::string& database);

// `sql` with each `?` replaced by the next of `values` (EXPLAIN cannot take placeholders).
std::string WithLiterals(std::string_view sql, const std::vector<std::string>& values);

}  // namespace room_outbox::testing
