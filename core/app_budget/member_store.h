// AppMemberStore: room_outbox_im_member over one MariaDbConnection of its own (SQL in
// core/mysql/outbox_sql.h, section "the app's IM budget"), every statement prepared at connect
// and sent as one short autocommit statement: the member's heartbeat never waits on a commit or
// a claim. Not thread-safe (one connection): the AppBudgetMember's thread owns it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/app_budget/share_split.h"
#include "core/mysql/connection.h"
#include "core/mysql/outbox_sql.h"
#include "core/result.h"
#include "room_outbox/options.h"

namespace room_outbox::core {

// The statements of a budget member, prepared right after connect.
inline constexpr const sql::Statement* kAppBudgetStatements[] = {
    &sql::Stmt::kImMemberBeat,  &sql::Stmt::kImMembers,    &sql::Stmt::kImMembersExpire,
    &sql::Stmt::kImMemberLeave, &sql::Stmt::kImBudgetLock, &sql::Stmt::kImBudgetUnlock,
};

// "room_outbox.budget." + ShortHash("<length of database>:<database><app_key>"): the named lock a
// beat holds (kImBudgetLock). Named locks are the server's, not a database's: the database is in
// the name because the members it guards are the rows of one database's room_outbox_im_member, so
// two databases on one server (staging beside production, a test beside another) never wait on
// each other's beats.
std::string AppBudgetLockName(std::string_view database, std::string_view app_key);

struct MemberReading {
  std::vector<MemberBeat> members;  // every row of the app, live or not
  int64_t server_now_ms = 0;
};

class AppMemberStore {
 public:
  // Connects at once; fails with the connection's error (kUnavailable when the server is down).
  [[nodiscard]] static Result<std::unique_ptr<AppMemberStore>> Connect(const MysqlOptions& options);

  // Writes this member's beat (server clock), demand and share.
  [[nodiscard]] Result<void> Beat(const std::string& app_key, const std::string& member_id,
                                  int64_t demand, int64_t share);
  // The app's rows and the server's clock.
  [[nodiscard]] Result<MemberReading> Read(const std::string& app_key);
  // Deletes the app's rows whose beat is older than `age_ms`.
  [[nodiscard]] Result<void> Expire(const std::string& app_key, int64_t age_ms);
  // Deletes this member's row.
  [[nodiscard]] Result<void> Leave(const std::string& app_key, const std::string& member_id);
  // Takes the named lock `name`, waiting at most `wait_seconds`: false when another connection
  // held it all that time. Unlock gives it back (a lost connection gives it back too).
  [[nodiscard]] Result<bool> Lock(const std::string& name, int64_t wait_seconds);
  [[nodiscard]] Result<void> Unlock(const std::string& name);

 private:
  explicit AppMemberStore(std::unique_ptr<MariaDbConnection> conn) : conn_(std::move(conn)) {}
  [[nodiscard]] Result<void> Run(const sql::Statement& id, std::vector<SqlValue> params);

  std::unique_ptr<MariaDbConnection> conn_;
};

}  // namespace room_outbox::core
