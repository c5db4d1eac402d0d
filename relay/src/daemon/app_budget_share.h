// The relay as a member of its IM app's shared request budget (core/app_budget): started after
// the publisher, so both draw on the same process budget, and stopped before the relay closes
// its database connections, which deletes its row. Every beat sets the budget gauges; a log line
// when the table cannot be reached or is reached again, when the live members change, and when
// the share moves by a quarter or more (at most one such line per kShareLogInterval).
#pragma once

#include <chrono>
#include <memory>

#include "config/config.h"
#include "core/app_budget/app_budget_member.h"
#include "telemetry/log_line.h"
#include "telemetry/metrics.h"

namespace room_outbox::relay {

inline constexpr std::chrono::seconds kShareLogInterval{10};

// Null when the process shares no budget: [tencent_im] app_requests_per_second or
// requests_per_second is 0. `config`, `metrics` and `logger` must outlive the member.
std::unique_ptr<core::AppBudgetMember> JoinAppBudget(const Config& config, Metrics& metrics,
                                                     Logger& logger);

}  // namespace room_outbox::relay
