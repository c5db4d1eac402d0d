#include "worker/loop_waits.h"

#include <algorithm>

namespace room_outbox::relay {

using std::chrono::milliseconds;

LoopWaits::LoopWaits(milliseconds poll_interval, milliseconds wake_min_interval, LoopClock& clock,
                     LoopSignal& signal, const RoomPacing& pacing)
    : poll_interval_(poll_interval),
      clock_(clock),
      signal_(signal),
      pacing_(pacing),
      wake_gap_(wake_min_interval) {}

void LoopWaits::RoundStarted() { wake_gap_.RoundStarted(clock_.SteadyMs()); }

void LoopWaits::RoundEnded(bool woken, bool claimed) { wake_gap_.RoundEnded(woken, claimed); }

milliseconds LoopWaits::Longest() const { return pacing_.MaxSleep(poll_interval_); }

bool LoopWaits::Sleep(milliseconds duration) {
  return clock_.SleepFor(std::clamp(duration, milliseconds(0), Longest()), signal_);
}

bool LoopWaits::IdleUntilWoken(milliseconds duration, bool& woken) {
  const int64_t end = clock_.SteadyMs() + std::clamp(duration, milliseconds(0), Longest()).count();
  while (true) {
    const int64_t now = clock_.SteadyMs();
    if (now >= end) {
      woken = signal_.wake_pending();
      return signal_.stop_requested();
    }
    if (!signal_.wake_pending()) {
      if (clock_.IdleFor(milliseconds(end - now), signal_)) return true;
      continue;  // the wait passed, or a wake-up came
    }
    const int64_t wake_at = wake_gap_.WakeAt();
    if (now >= wake_at) {
      woken = true;
      return false;
    }
    // Too soon after the round before: the wake-up stays pending until the gap has passed.
    if (clock_.SleepFor(milliseconds(std::min(wake_at, end) - now), signal_)) return true;
  }
}

milliseconds LoopWaits::UntilNextDue(const std::optional<int64_t>& next_due_at, milliseconds idle) {
  if (!next_due_at) return idle;
  // One millisecond past it, so the row is due on the server's clock when the claim runs; at
  // least one, so a time already passed during the round cannot make the loop spin.
  const int64_t until = *next_due_at + 1 - clock_.SteadyMs();
  return std::min(idle, milliseconds(std::max<int64_t>(until, 1)));
}

}  // namespace room_outbox::relay
