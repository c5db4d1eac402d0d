// The room-service process as a member of its IM app's shared request budget (core/app_budget):
// one AppBudgetMember per process and app for every Hook that sends (sync_publish inline or
// background), started by the first such Hook and stopped, its row deleted, when the last one is
// destroyed (core/process_registry.h). Its share paces the process budget every publisher of the
// app draws on (ProcessRateBudget), so the hooks' sync publishes and the relays divide the app's
// limit. Started by core::StartAppBudgetMember, as the relay's.
#pragma once

#include <memory>

#include "core/app_budget/app_budget_member.h"
#include "room_outbox/hook.h"

namespace room_outbox::internal {

// The process's member for `options`' IM app, started now if no Hook holds one. Null when the
// hook sends nothing (sync_publish off) or shares no budget (app_requests_per_second or
// requests_per_second 0). A table that cannot be reached is not an error: the member then keeps
// a safe share (app_budget_member.h).
std::shared_ptr<core::AppBudgetMember> JoinAppBudget(const HookOptions& options);

}  // namespace room_outbox::internal
