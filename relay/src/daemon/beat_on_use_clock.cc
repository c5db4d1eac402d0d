#include "daemon/beat_on_use_clock.h"

#include <algorithm>

namespace room_outbox::relay {

int64_t BeatOnUseClock::NowMs() {
  heartbeat_.Beat();
  return inner_.NowMs();
}

int64_t BeatOnUseClock::SteadyMs() {
  heartbeat_.Beat();
  return inner_.SteadyMs();
}

bool BeatOnUseClock::SleepFor(std::chrono::milliseconds duration, LoopSignal& stop) {
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

bool BeatOnUseClock::IdleFor(std::chrono::milliseconds duration, LoopSignal& stop) {
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
