#include "support/private_mariadb.h"

#include <mysql.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <vector>

namespace room_outbox::testing {
namespace {

namespace fs = std::filesystem;

std::string Script() {
  return std::string(ROOM_OUTBOX_SOURCE_DIR) + "/scripts/mariadb-local.sh";
}

}  // namespace

bool PrivateMariaDb::Start() {
  const std::string cmd = Script() + " start " + dir_.string() + " 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  if (pipe == nullptr) return false;
  char buf[512];
  std::string out;
  while (fgets(buf, sizeof(buf), pipe) != nullptr) out += buf;
  const int status = pclose(pipe);
  if (status != 0) {
    ADD_FAILURE() << "mariadb-local.sh start failed:\n" << out;
    return false;
  }
  socket_ = (dir_ / "mysqld.sock").string();
  return true;
}

bool PrivateMariaDb::Stop() {
  if (socket_.empty()) return true;
  const int rc = std::system((Script() + " stop " + dir_.string()).c_str());
  EXPECT_EQ(rc, 0);
  return rc == 0;
}

bool PrivateMariaDb::CreateDatabase(const std::string& name) {
  std::unique_ptr<MYSQL, decltype(&mysql_close)> conn(mysql_init(nullptr), &mysql_close);
  if (!conn || mysql_real_connect(conn.get(), nullptr, "root", nullptr, nullptr, 0,
                                  socket_.c_str(), CLIENT_MULTI_STATEMENTS) == nullptr) {
    ADD_FAILURE() << "connect to private MariaDB: " << mysql_error(conn.get());
    return false;
  }
  std::vector<std::string> sql = {"CREATE DATABASE `" + name +
                                      "` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin",
                                  "USE `" + name + "`"};
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(ROOM_OUTBOX_SCHEMA_DIR)) {
    if (entry.path().extension() == ".sql") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  for (const fs::path& file : files) {
    std::ifstream in(file);
    std::ostringstream text;
    text << in.rdbuf();
    sql.push_back(text.str());
  }
  for (const std::string& statement : sql) {
    if (mysql_query(conn.get(), statement.c_str()) != 0) {
      ADD_FAILURE() << "schema: " << mysql_error(conn.get());
      return false;
    }
    do {
      if (MYSQL_RES* res = mysql_store_result(conn.get())) mysql_free_result(res);
    } while (mysql_next_result(conn.get()) == 0);
  }
  return true;
}

MysqlOptions PrivateMariaDb::Options(const std::string& database) const {
  MysqlOptions options;
  options.socket = socket_;
  options.user = "root";
  options.database = database;
  return options;
}

}  // namespace room_outbox::testing
