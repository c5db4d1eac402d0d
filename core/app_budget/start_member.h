// Starting a process's AppBudgetMember from the options the hook and the relay both read
// ([mysql], [tencent_im]): the app key, the member id, the limits and the process budget it paces
// (ProcessRateBudget, the one the process's publishers of that app draw on).
#pragma once

#include <memory>
#include <string>

#include "core/app_budget/app_budget_member.h"
#include "room_outbox/options.h"

namespace room_outbox::core {

// Whether a process configured with `im` shares the app's budget: app_requests_per_second and
// requests_per_second are both > 0.
bool SharesAppBudget(const TencentImOptions& im);

// AppKey of `im`'s endpoint (normalized when valid, else as configured) and sdk_app_id.
std::string ImAppKey(const TencentImOptions& im);

// The process's member of `im`'s app in the database of `mysql`, started now (its first beat
// made). Null when !SharesAppBudget(im).
std::unique_ptr<AppBudgetMember> StartAppBudgetMember(const MysqlOptions& mysql,
                                                      const TencentImOptions& im,
                                                      AppBudgetMember::OnBeat on_beat);

}  // namespace room_outbox::core
