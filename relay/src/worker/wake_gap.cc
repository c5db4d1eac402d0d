#include "worker/wake_gap.h"

#include <algorithm>

namespace room_outbox::relay {

WakeGap::WakeGap(std::chrono::milliseconds min_interval)
    : min_interval_(std::max(min_interval, std::chrono::milliseconds(1))),
      max_gap_(std::max(min_interval_, kMaxWakeGap)),
      gap_(min_interval_) {}

void WakeGap::RoundStarted(int64_t now) {
  last_start_ = now;
  started_ = true;
}

void WakeGap::RoundEnded(bool woken, bool claimed) {
  if (claimed) {
    gap_ = min_interval_;
  } else if (woken) {
    gap_ = std::min(gap_ * 2, max_gap_);
  }
}

}  // namespace room_outbox::relay
