#include "core/app_budget/start_member.h"

#include <utility>

#include "core/tencent/im_endpoint.h"
#include "core/tencent/process_rate_budget.h"

namespace room_outbox::core {
namespace {

std::string EndpointBase(const TencentImOptions& im) {
  auto endpoint = NormalizeImEndpoint(im.endpoint);
  return endpoint ? *endpoint : im.endpoint;
}

}  // namespace

bool SharesAppBudget(const TencentImOptions& im) {
  return im.app_requests_per_second > 0 && im.requests_per_second > 0;
}

std::string ImAppKey(const TencentImOptions& im) { return AppKey(EndpointBase(im), im.sdk_app_id); }

std::unique_ptr<AppBudgetMember> StartAppBudgetMember(const MysqlOptions& mysql,
                                                      const TencentImOptions& im,
                                                      AppBudgetMember::OnBeat on_beat) {
  if (!SharesAppBudget(im)) {
    return nullptr;
  }
  const std::string base = EndpointBase(im);
  AppBudgetSettings settings;
  settings.mysql = mysql;
  settings.app_key = AppKey(base, im.sdk_app_id);
  settings.member_id = NewMemberId();
  settings.app_limit = im.app_requests_per_second;
  settings.process_cap = im.requests_per_second;
  return AppBudgetMember::Start(std::move(settings),
                                ProcessRateBudget(base, im.sdk_app_id, im.requests_per_second),
                                std::move(on_beat));
}

}  // namespace room_outbox::core
