#include "daemon/app_budget_share.h"

#include <cmath>
#include <string>

#include "core/app_budget/start_member.h"
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
  auto last = std::make_shared<ShareLog>();
  return core::StartAppBudgetMember(
      config.mysql, config.tencent_im,
      [&config, &metrics, &logger, last](const core::AppBudgetStatus& status) {
        metrics.SetImBudgetShare(status.share, status.table_reached ? status.live_members : -1);
        LogBeat(config, logger, *last, status);
      });
}

}  // namespace room_outbox::relay
