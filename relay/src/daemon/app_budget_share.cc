#include "daemon/app_budget_share.h"

#include <cmath>
#include <string>

#include "core/tencent/im_endpoint.h"
#include "daemon/lifecycle_log.h"

namespace room_outbox::relay {
namespace {

// What the last log lines said, to say only what changed.
struct ShareLog {
  bool logged = false;
  bool reached = false;
  int members = 0;
  double share = 0;
  std::chrono::steady_clock::time_point share_logged_at;
};

void LogBeat(const Config& config, Logger& logger, ShareLog& last, const core::AppBudgetStatus& s) {
  const auto now = std::chrono::steady_clock::now();
  if (!s.table_reached) {
    if (!last.logged || last.reached) {
      logger.Warn(Lifecycle("cannot read the IM budget members; keeping a safe share", config)
                      .Add("share_requests_per_second", static_cast<int64_t>(std::lround(s.share)))
                      .Add("error", s.error));
    }
  } else {
    const bool moved = std::abs(s.share - last.share) >= 0.25 * std::max(last.share, 1.0) &&
                       now - last.share_logged_at >= kShareLogInterval;
    if (!last.logged || !last.reached || s.live_members != last.members || moved) {
      logger.Info(
          Lifecycle("IM budget share", config)
              .Add("share_requests_per_second", static_cast<int64_t>(std::lround(s.share)))
              .Add("members", s.live_members)
              .Add("app_requests_per_second",
                   static_cast<int64_t>(std::lround(config.tencent_im.app_requests_per_second))));
      last.share = s.share;
      last.share_logged_at = now;
    }
    last.members = s.live_members;
  }
  last.logged = true;
  last.reached = s.table_reached;
}

}  // namespace

std::unique_ptr<core::AppBudgetMember> JoinAppBudget(const Config& config, Metrics& metrics,
                                                     Logger& logger) {
  const TencentImOptions& im = config.tencent_im;
  if (im.app_requests_per_second <= 0 || im.requests_per_second <= 0) {
    return nullptr;
  }
  auto endpoint = core::NormalizeImEndpoint(im.endpoint);
  const std::string base = endpoint ? *endpoint : im.endpoint;
  core::AppBudgetSettings settings;
  settings.mysql = config.mysql;
  settings.app_key = core::AppKey(base, im.sdk_app_id);
  settings.member_id = core::NewMemberId();
  settings.app_limit = im.app_requests_per_second;
  settings.process_cap = im.requests_per_second;
  auto last = std::make_shared<ShareLog>();
  return core::AppBudgetMember::Start(
      std::move(settings), core::ProcessRateBudget(base, im.sdk_app_id, im.requests_per_second),
      [&config, &metrics, &logger, last](const core::AppBudgetStatus& status) {
        metrics.SetImBudgetShare(status.share, status.table_reached ? status.live_members : -1);
        LogBeat(config, logger, *last, status);
      });
}

}  // namespace room_outbox::relay
