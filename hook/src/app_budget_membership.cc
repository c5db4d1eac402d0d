#include "app_budget_membership.h"

#include <string>

#include "core/app_budget/start_member.h"
#include "core/process_registry.h"

namespace room_outbox::internal {

std::shared_ptr<core::AppBudgetMember> JoinAppBudget(const HookOptions& options) {
  if (options.sync_publish == SyncPublishMode::kOff || !core::SharesAppBudget(options.tencent_im)) {
    return nullptr;
  }
  // Hooks of one app writing to two databases are two members, one in each database's table.
  static core::ProcessRegistry<core::AppBudgetMember> members;
  const MysqlOptions& db = options.mysql;
  const std::string server =
      db.socket.empty() ? db.host + ":" + std::to_string(db.port) : db.socket;
  return members.Get(core::RegistryKey(server, db.database, core::ImAppKey(options.tencent_im)),
                     [&options]() -> std::shared_ptr<core::AppBudgetMember> {
                       return core::StartAppBudgetMember(options.mysql, options.tencent_im,
                                                         nullptr);
                     });
}

}  // namespace room_outbox::internal
