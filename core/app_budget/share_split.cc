#include "core/app_budget/share_split.h"

#include <algorithm>
#include <cmath>

namespace room_outbox::core {

bool IsLive(const MemberBeat& member, int64_t now_ms, int64_t beat_interval_ms) {
  return member.beat_ms >= now_ms - 2 * beat_interval_ms;
}

AppShare SplitAppBudget(const std::vector<MemberBeat>& members, std::string_view self,
                        double app_limit, int64_t now_ms, int64_t beat_interval_ms) {
  std::vector<const MemberBeat*> live;
  const MemberBeat* mine = nullptr;
  for (const MemberBeat& member : members) {
    if (member.member_id == self) {
      mine = &member;  // always live: this member is computing
      live.push_back(&member);
    } else if (IsLive(member, now_ms, beat_interval_ms)) {
      live.push_back(&member);
    }
  }
  const MemberBeat absent{std::string(self), now_ms, 0, 0};
  if (mine == nullptr) {
    live.push_back(&absent);
    mine = &absent;
  }
  const double n = static_cast<double>(live.size());
  const double floor = app_limit * kFloorFraction / n;
  std::sort(live.begin(), live.end(), [](const MemberBeat* a, const MemberBeat* b) {
    return a->demand != b->demand ? a->demand < b->demand : a->member_id < b->member_id;
  });
  // Max-min fair over the demands beyond the floor, smallest first.
  double left = app_limit - floor * n;
  double mine_filled = 0;
  double others_hold = 0;
  for (size_t i = 0; i < live.size(); ++i) {
    const double need = std::max(0.0, static_cast<double>(live[i]->demand) - floor);
    const double filled = std::min(need, left / static_cast<double>(live.size() - i));
    left -= filled;
    if (live[i] == mine) {
      mine_filled = filled;
    } else {
      others_hold += static_cast<double>(live[i]->share);
    }
  }
  const double fair = floor + mine_filled + left / n;
  const double free = app_limit - others_hold;
  const double share = std::max(kMinShare, std::min(fair, free));
  return AppShare{share, static_cast<int>(live.size()), share + 0.5 < fair};
}

int64_t ReportedDemand(uint64_t acquired, uint64_t waited, int64_t beat_ms, double most) {
  if (waited > 0) {
    return static_cast<int64_t>(std::ceil(most));
  }
  const double seconds = static_cast<double>(std::max<int64_t>(beat_ms, 1)) / 1000.0;
  const double rate = std::ceil(static_cast<double>(acquired) / seconds);
  return static_cast<int64_t>(std::min(rate, std::ceil(most)));
}

double FallbackShare(std::optional<double> last_share, double app_limit, int assumed_members) {
  if (last_share) {
    return std::min(*last_share, app_limit);
  }
  return app_limit / static_cast<double>(std::max(assumed_members, 1));
}

}  // namespace room_outbox::core
