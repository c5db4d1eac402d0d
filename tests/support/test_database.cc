#include "support/test_database.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

namespace room_outbox::testing {
namespace {

std::string NewName() {
  static std::atomic<int> counter{0};
  std::random_device rd;
  std::ostringstream out;
  out << "t_" << getpid() << "_" << counter++ << "_" << (rd() % 100000);
  return out.str();
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

}  // namespace

std::string TestMysqlSocket() {
  const char* socket = std::getenv("ROOM_OUTBOX_TEST_MYSQL_SOCKET");
  if (socket == nullptr || *socket == '\0') {
    ADD_FAILURE() << "ROOM_OUTBOX_TEST_MYSQL_SOCKET is not set: run the integration tests "
                     "through `make test` (scripts/run-tests.sh starts the private MariaDB)";
    return "";
  }
  return socket;
}

TestDatabase::TestDatabase() : socket_(TestMysqlSocket()), name_(NewName()) {
  if (socket_.empty()) {
    return;
  }
  std::unique_ptr<MYSQL, Closer> conn(mysql_init(nullptr));
  if (!conn) {
    ADD_FAILURE() << "mysql_init failed";
    return;
  }
  if (mysql_real_connect(conn.get(), nullptr, "root", nullptr, nullptr, 0, socket_.c_str(),
                         CLIENT_MULTI_STATEMENTS) == nullptr) {
    ADD_FAILURE() << "cannot connect to test MariaDB at " << socket_ << ": "
                  << mysql_error(conn.get());
    return;
  }
  conn_ = std::move(conn);
  Exec("CREATE DATABASE `" + name_ + "` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin");
  Exec("USE `" + name_ + "`");
  ApplySchema();
}

void TestDatabase::ApplySchema() {
  for (const auto& file : SchemaFiles()) {
    std::ifstream in(file);
    std::stringstream text;
    text << in.rdbuf();
    Exec(text.str());
  }
}

TestDatabase::~TestDatabase() {
  if (conn_) {
    Exec("DROP DATABASE IF EXISTS `" + name_ + "`");
  }
}

MysqlOptions TestDatabase::Options() const {
  MysqlOptions options;
  options.socket = socket_;
  options.user = "root";
  options.password = "";
  options.database = name_;
  options.connect_timeout = std::chrono::milliseconds(5000);
  return options;
}

std::vector<TestDatabase::Row> TestDatabase::Query(const std::string& sql) {
  std::vector<Row> rows;
  if (!conn_) {
    ADD_FAILURE() << "no test database for: " << sql;
    return rows;
  }
  if (mysql_query(conn_.get(), sql.c_str()) != 0) {
    ADD_FAILURE() << "query failed: " << sql << ": " << mysql_error(conn_.get());
    return rows;
  }
  // Multi-statement text (schema files) may return several results; collect them all.
  do {
    MYSQL_RES* res = mysql_store_result(conn_.get());
    if (res != nullptr) {
      unsigned int fields = mysql_num_fields(res);
      while (MYSQL_ROW row = mysql_fetch_row(res)) {
        unsigned long* lengths = mysql_fetch_lengths(res);
        Row out;
        for (unsigned int i = 0; i < fields; ++i) {
          if (row[i] == nullptr) {
            out.emplace_back(std::nullopt);
          } else {
            out.emplace_back(std::string(row[i], lengths[i]));
          }
        }
        rows.push_back(std::move(out));
      }
      mysql_free_result(res);
    } else if (mysql_field_count(conn_.get()) != 0) {
      ADD_FAILURE() << "reading result failed: " << sql << ": " << mysql_error(conn_.get());
    }
    int next = mysql_next_result(conn_.get());
    if (next > 0) {
      ADD_FAILURE() << "statement failed: " << sql << ": " << mysql_error(conn_.get());
      break;
    }
    if (next != 0) {
      break;
    }
  } while (true);
  return rows;
}

int64_t TestDatabase::Scalar(const std::string& sql) {
  auto rows = Query(sql);
  if (rows.empty() || rows[0].empty() || !rows[0][0]) {
    return 0;
  }
  return std::stoll(*rows[0][0]);
}

void TestDatabase::Exec(const std::string& sql) { (void)Query(sql); }

}  // namespace room_outbox::testing
