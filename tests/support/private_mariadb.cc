#include "support/private_mariadb.h"

#include "support/mysql_admin.h"

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

bool PrivateMariaDb::Start(const std::vector<std::string>& mariadbd_args) {
  std::string cmd = Script() + " start " + dir_.string();
  for (const std::string& arg : mariadbd_args) {
    cmd += " '" + arg + "'";  // test-controlled paths and numbers, never quotes
  }
  cmd += " 2>&1";
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
  std::string error;
  core::MysqlPtr conn = ConnectAsRoot(socket_, error);
  if (conn) {
    error = CreateSchemaDatabase(conn.get(), socket_, name);
  }
  if (!error.empty()) {
    ADD_FAILURE() << "private MariaDB: " << error;
    return false;
  }
  return true;
}

MysqlOptions PrivateMariaDb::Options(const std::string& database) const {
  return RootOptions(socket_, database);
}

}  // namespace room_outbox::testing
