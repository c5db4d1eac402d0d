#include "support/failover_server.h"

#include <gtest/gtest.h>

#include <map>
#include <sstream>

#include "support/grants.h"
#include "support/mysql_admin.h"
#include "support/test_rows.h"

namespace room_outbox::testing {
namespace {

std::string Account(const std::string& role) {
  return "'" + FailoverServer::User(role) + "'@'localhost'";
}

}  // namespace

bool FailoverServer::Start() {
  if (!server_.Start() || !server_.CreateDatabase(database_)) return false;
  const std::map<std::string, std::string> names = {{"{database}", "`" + database_ + "`"},
                                                    {"{hook}", Account("hook")},
                                                    {"{relay}", Account("relay")}};
  for (const char* role : {"hook", "relay"}) {
    Exec("CREATE USER " + Account(role) + " IDENTIFIED BY '" + kFailoverPassword + "'");
    for (const std::string& grant : GrantsTo(std::string("{") + role + "}", names)) Exec(grant);
  }
  return !::testing::Test::HasFailure();
}

MysqlOptions FailoverServer::As(const std::string& role) const {
  MysqlOptions options = server_.Options(database_);
  options.user = User(role);
  options.password = kFailoverPassword;
  return options;
}

std::vector<std::vector<std::string>> FailoverServer::Rows(const std::string& sql) const {
  std::string error;
  core::MysqlPtr conn = ConnectAsRoot(server_.socket(), error);
  std::vector<SqlRow> rows;
  if (conn) error = RunSql(conn.get(), "USE `" + database_ + "`; " + sql, rows);
  EXPECT_EQ(error, "") << sql;
  std::vector<std::vector<std::string>> out;
  for (const SqlRow& row : rows) {
    std::vector<std::string> values;
    for (const auto& value : row) values.push_back(value.value_or("NULL"));
    out.push_back(std::move(values));
  }
  return out;
}

void FailoverServer::Exec(const std::string& sql) const { (void)Rows(sql); }

int64_t FailoverServer::Scalar(const std::string& sql) const {
  const auto rows = Rows(sql);
  if (rows.empty() || rows[0].empty() || rows[0][0] == "NULL") return -1;
  return std::stoll(rows[0][0]);
}

void FailoverServer::SetReadOnly(bool on) const {
  Exec(std::string("SET GLOBAL read_only = ") + (on ? "ON" : "OFF"));
}

void FailoverServer::InsertRows(const std::string& prefix, int count, int rooms) const {
  std::ostringstream sql;
  sql << "INSERT INTO room_outbox (event_id, event_type, room_id, command_id, request_id, "
         "envelope, status, retry_count, next_attempt_at_ms, created_at_ms, updated_at_ms) VALUES ";
  for (int i = 0; i < count; ++i) {
    const std::string event_id = prefix + "-" + std::to_string(i);
    const std::string room_id = prefix + "-room-" + std::to_string(i % rooms);
    sql << (i == 0 ? "" : ",") << "(" << SqlQuote(event_id) << ",'RoomGiftSent',"
        << SqlQuote(room_id) << "," << SqlQuote("cmd-" + event_id) << ","
        << SqlQuote("req-" + event_id) << ","
        << SqlQuote(TestEnvelope(event_id, room_id, i / rooms + 1, "node-failover"))
        << ",'pending',0,0," << kServerNowSql << "," << kServerNowSql << ")";
  }
  Exec(sql.str());
}

std::string FailoverServer::RowStates() const {
  std::string out;
  for (const auto& row :
       Rows("SELECT id, status, retry_count, claim_token, next_attempt_at_ms, updated_at_ms "
            "FROM room_outbox ORDER BY id")) {
    for (const std::string& value : row) out += value + " ";
    out += "\n";
  }
  return out;
}

int64_t FailoverServer::Logged(const std::string& command_id) const {
  return Scalar("SELECT COUNT(*) FROM room_command_log WHERE command_id = " + SqlQuote(command_id));
}

}  // namespace room_outbox::testing
