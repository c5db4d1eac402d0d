#include "app_budget_membership.h"

#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "core/tencent/im_endpoint.h"
#include "core/tencent/process_rate_budget.h"

namespace room_outbox::internal {
namespace {

// The live members by database and app key; a member lives while a Hook holds it.
struct Members {
  std::mutex mu;
  std::map<std::string, std::weak_ptr<core::AppBudgetMember>> by_app;
};

Members& TheMembers() {
  static Members* members = new Members();  // never destroyed: Hooks may outlive statics
  return *members;
}

}  // namespace

std::shared_ptr<core::AppBudgetMember> JoinAppBudget(const HookOptions& options) {
  const TencentImOptions& im = options.tencent_im;
  if (options.sync_publish == SyncPublishMode::kOff || im.app_requests_per_second <= 0 ||
      im.requests_per_second <= 0) {
    return nullptr;
  }
  auto endpoint = core::NormalizeImEndpoint(im.endpoint);
  const std::string base = endpoint ? *endpoint : im.endpoint;
  const std::string app_key = core::AppKey(base, im.sdk_app_id);
  // Hooks of one app writing to two databases are two members, one in each database's table.
  const MysqlOptions& db = options.mysql;
  const std::string where = (db.socket.empty() ? db.host + ":" + std::to_string(db.port)
                                               : db.socket) + "/" + db.database + " " + app_key;
  Members& members = TheMembers();
  std::lock_guard<std::mutex> lock(members.mu);
  if (auto live = members.by_app[where].lock()) {
    return live;
  }
  core::AppBudgetSettings settings;
  settings.mysql = options.mysql;
  settings.app_key = app_key;
  settings.member_id = core::NewMemberId();
  settings.app_limit = im.app_requests_per_second;
  settings.process_cap = im.requests_per_second;
  std::shared_ptr<core::AppBudgetMember> member = core::AppBudgetMember::Start(
      std::move(settings), core::ProcessRateBudget(base, im.sdk_app_id, im.requests_per_second),
      nullptr);
  members.by_app[where] = member;
  return member;
}

}  // namespace room_outbox::internal
