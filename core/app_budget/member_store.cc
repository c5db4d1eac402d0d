#include "core/app_budget/member_store.h"

#include <utility>

#include "core/claim_token.h"
#include "core/mysql/outbox_sql.h"

namespace room_outbox::core {

Result<std::unique_ptr<AppMemberStore>> AppMemberStore::Connect(const MysqlOptions& options) {
  auto conn = MariaDbConnection::Connect(options);
  if (!conn) return Fail(conn.error());
  if (auto prepared = (*conn)->PrepareNow(kAppBudgetStatements); !prepared) {
    return Fail(prepared.error());
  }
  return std::unique_ptr<AppMemberStore>(new AppMemberStore(std::move(*conn)));
}

Result<void> AppMemberStore::Run(const sql::Statement& id, std::vector<SqlValue> params) {
  auto stmt = conn_->Prepared(id);
  if (!stmt) return Fail(stmt.error());
  return (*stmt)->Execute(params);
}

Result<void> AppMemberStore::Beat(const std::string& app_key, const std::string& member_id,
                                  int64_t demand, int64_t share) {
  return Run(sql::Stmt::kImMemberBeat, {SqlValue{app_key}, SqlValue{member_id}, SqlValue{demand},
                                        SqlValue{share}, SqlValue{demand}, SqlValue{share}});
}

Result<MemberReading> AppMemberStore::Read(const std::string& app_key) {
  auto stmt = conn_->Prepared(sql::Stmt::kImMembers);
  if (!stmt) return Fail(stmt.error());
  if (auto done = (*stmt)->Execute(std::vector<SqlValue>{SqlValue{app_key}}); !done) {
    return Fail(done.error());
  }
  auto rows = (*stmt)->FetchAll();
  if (!rows) return Fail(rows.error());
  MemberReading reading;
  for (const ResultRow& row : *rows) {
    MemberBeat member{row.Str(0)};
    for (auto [column, target] :
         {std::pair{1, &member.beat_ms}, std::pair{2, &member.demand}, std::pair{3, &member.share},
          std::pair{4, &reading.server_now_ms}}) {
      auto value = row.Int(static_cast<size_t>(column));
      if (!value) return Fail(value.error());
      *target = *value;
    }
    reading.members.push_back(std::move(member));
  }
  return reading;
}

Result<void> AppMemberStore::Expire(const std::string& app_key, int64_t age_ms) {
  return Run(sql::Stmt::kImMembersExpire, {SqlValue{app_key}, SqlValue{age_ms}});
}

std::string AppBudgetLockName(std::string_view database, std::string_view app_key) {
  std::string key = std::to_string(database.size()) + ":";
  key.append(database).append(app_key);
  return "room_outbox.budget." + ShortHash(key);
}

Result<bool> AppMemberStore::Lock(const std::string& name, int64_t wait_seconds) {
  auto stmt = conn_->Prepared(sql::Stmt::kImBudgetLock);
  if (!stmt) return Fail(stmt.error());
  if (auto done = (*stmt)->Execute(std::vector<SqlValue>{SqlValue{name}, SqlValue{wait_seconds}});
      !done) {
    return Fail(done.error());
  }
  auto rows = (*stmt)->FetchAll();
  if (!rows) return Fail(rows.error());
  if (rows->empty() || rows->front().IsNull(0)) {
    return Fail(ErrorCode::kInternal, "GET_LOCK(" + name + ") answered NULL");
  }
  auto taken = rows->front().Int(0);
  if (!taken) return Fail(taken.error());
  return *taken == 1;
}

Result<void> AppMemberStore::Unlock(const std::string& name) {
  auto stmt = conn_->Prepared(sql::Stmt::kImBudgetUnlock);
  if (!stmt) return Fail(stmt.error());
  if (auto done = (*stmt)->Execute(std::vector<SqlValue>{SqlValue{name}}); !done) {
    return Fail(done.error());
  }
  auto rows = (*stmt)->FetchAll();  // read the answer off the connection
  if (!rows) return Fail(rows.error());
  return {};
}

Result<void> AppMemberStore::Leave(const std::string& app_key, const std::string& member_id) {
  return Run(sql::Stmt::kImMemberLeave, {SqlValue{app_key}, SqlValue{member_id}});
}

}  // namespace room_outbox::core
