#include "support/mysql_admin.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <utility>

#include "core/mysql/connection.h"
#include "migrate/migrate.h"

namespace room_outbox::testing {

core::MysqlPtr ConnectAsRoot(const std::string& socket, std::string& error) {
  core::MysqlPtr conn(mysql_init(nullptr));
  if (!conn) {
    error = "mysql_init failed";
    return nullptr;
  }
  if (mysql_real_connect(conn.get(), nullptr, "root", nullptr, nullptr, 0, socket.c_str(),
                         CLIENT_MULTI_STATEMENTS) == nullptr) {
    error = "cannot connect to MariaDB at " + socket + ": " + mysql_error(conn.get());
    return nullptr;
  }
  return conn;
}

std::string RunSql(MYSQL* conn, const std::string& sql, std::vector<SqlRow>& rows,
                   size_t quoted) {
  auto text = [&] { return sql.substr(0, quoted); };
  if (mysql_real_query(conn, sql.data(), sql.size()) != 0) {
    return "query failed: " + text() + ": " + mysql_error(conn);
  }
  std::string error;
  // Multi-statement text (schema files) may return several results; collect them all.
  while (true) {
    core::MysqlResPtr res(mysql_store_result(conn));
    if (res) {
      const unsigned int fields = mysql_num_fields(res.get());
      while (MYSQL_ROW row = mysql_fetch_row(res.get())) {
        const unsigned long* lengths = mysql_fetch_lengths(res.get());
        SqlRow out;
        out.reserve(fields);
        for (unsigned int i = 0; i < fields; ++i) {
          if (row[i] == nullptr) {
            out.emplace_back(std::nullopt);
          } else {
            out.emplace_back(std::string(row[i], lengths[i]));
          }
        }
        rows.push_back(std::move(out));
      }
    } else if (mysql_field_count(conn) != 0 && error.empty()) {
      error = "reading result failed: " + text() + ": " + mysql_error(conn);
    }
    const int next = mysql_next_result(conn);
    if (next > 0) {
      return error.empty() ? "statement failed: " + text() + ": " + mysql_error(conn) : error;
    }
    if (next != 0) {
      return error;
    }
  }
}

std::vector<std::filesystem::path> SchemaFiles() {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(ROOM_OUTBOX_SCHEMA_DIR)) {
    if (entry.path().extension() == ".sql") {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string MigrateSchema(const std::string& socket, const std::string& name) {
  auto conn = core::MariaDbConnection::Connect(RootOptions(socket, name));
  if (!conn) {
    return "migrate " + name + ": " + conn.error().message;
  }
  auto migrated = relay::migrate::MigrateToLatest(**conn);
  return migrated ? "" : "migrate " + name + ": " + migrated.error().message;
}

std::string CreateSchemaDatabase(MYSQL* conn, const std::string& socket,
                                 const std::string& name) {
  std::vector<SqlRow> ignored;
  for (const std::string& sql :
       {"CREATE DATABASE `" + name + "` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin",
        "USE `" + name + "`"}) {
    if (std::string error = RunSql(conn, sql, ignored); !error.empty()) {
      return error;
    }
  }
  return MigrateSchema(socket, name);
}

SqlDialect TestDialect() {
  const char* value = std::getenv("ROOM_OUTBOX_TEST_MYSQL_DIALECT");
  if (value == nullptr || *value == '\0') {
    return SqlDialect::kAuto;
  }
  if (auto dialect = ParseSqlDialect(value)) {
    return *dialect;
  }
  std::fprintf(stderr, "ROOM_OUTBOX_TEST_MYSQL_DIALECT=%s: expected mysql, mariadb or auto\n",
               value);
  std::abort();
}

MysqlOptions RootOptions(const std::string& socket, const std::string& database) {
  MysqlOptions options;
  options.dialect = TestDialect();
  options.socket = socket;
  options.user = "root";
  options.password = "";
  options.database = database;
  return options;
}

std::string WithLiterals(std::string_view sql, const std::vector<std::string>& values) {
  std::string out;
  size_t next = 0;
  for (char c : sql) {
    if (c == '?' && next < values.size()) {
      out += values[next++];
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace room_outbox::testing
