#include "support/test_database.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <random>
#include <sstream>

#include "support/mysql_admin.h"

namespace room_outbox::testing {
namespace {

std::string NewName() {
  static std::atomic<int> counter{0};
  std::random_device rd;
  std::ostringstream out;
  out << "t_" << getpid() << "_" << counter++ << "_" << (rd() % 100000);
  return out.str();
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
  std::string error;
  conn_ = ConnectAsRoot(socket_, error);
  if (!conn_) {
    ADD_FAILURE() << "test MariaDB: " << error;
    return;
  }
  error = CreateSchemaDatabase(conn_.get(), socket_, name_);
  if (!error.empty()) {
    ADD_FAILURE() << error;
  }
}

void TestDatabase::ApplySchema() {
  if (!conn_) {
    ADD_FAILURE() << "no test database to apply the schema to";
    return;
  }
  const std::string error = MigrateSchema(socket_, name_);
  if (!error.empty()) {
    ADD_FAILURE() << error;
  }
}

TestDatabase::~TestDatabase() {
  if (conn_) {
    Exec("DROP DATABASE IF EXISTS `" + name_ + "`");
  }
}

MysqlOptions TestDatabase::Options() const {
  MysqlOptions options = RootOptions(socket_, name_);
  options.connect_timeout = std::chrono::milliseconds(5000);
  return options;
}

std::vector<TestDatabase::Row> TestDatabase::Query(const std::string& sql) {
  std::vector<Row> rows;
  if (!conn_) {
    ADD_FAILURE() << "no test database for: " << sql;
    return rows;
  }
  const std::string error = RunSql(conn_.get(), sql, rows);
  if (!error.empty()) {
    ADD_FAILURE() << error;
  }
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
