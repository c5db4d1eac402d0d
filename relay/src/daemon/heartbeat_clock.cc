#include "daemon/heartbeat_clock.h"

#include <algorithm>

namespace room_outbox::relay {

int64_t HeartbeatClock::NowMs() {
  heartbeat_.Beat();
  return inner_.NowMs();
}

int64_t HeartbeatClock::SteadyMs() {
  heartbeat_.Beat();
  return inner_.SteadyMs();
}

bool HeartbeatClock::SleepFor(std::chrono::milliseconds duration, LoopSignal& stop) {
  heartbeat_.Beat();
  while (duration.count() > 0) {
    const std::chrono::milliseconds step = std::min(duration, slice_);
    if (inner_.SleepFor(step, stop)) {
      return true;
    }
    duration -= step;
    heartbeat_.Beat();
  }
  return stop.stop_requested();
}

bool HeartbeatClock::IdleFor(std::chrono::milliseconds duration, LoopSignal& stop) {
  heartbeat_.Beat();
  while (duration.count() > 0 && !stop.wake_pending()) {
    const std::chrono::milliseconds step = std::min(duration, slice_);
    if (inner_.IdleFor(step, stop)) {
      return true;
    }
    duration -= step;
    heartbeat_.Beat();
  }
  return stop.stop_requested();
}

}  // namespace room_outbox::relay
