// LoopWaits: the worker loop's waits. Every sleep the loop computes is clamped to
// [0, max(poll_interval, room_min_interval)] (RoomPacing::MaxSleep), so no clock step can stretch
// it. The idle wait between rounds also ends on a wake-up (LoopSignal::Wake), but no sooner than
// WakeGap allows after the start of the round before; a wake-up that comes too soon stays pending
// until the gap has passed.
//
// One thread (the worker's); the LoopSignal may be set from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

#include "worker/loop_clock.h"
#include "worker/room_pacing.h"
#include "worker/wake_gap.h"

namespace room_outbox::relay {

class LoopWaits {
 public:
  // Every reference must outlive the waits.
  LoopWaits(std::chrono::milliseconds poll_interval, std::chrono::milliseconds wake_min_interval,
            LoopClock& clock, LoopSignal& signal, const RoomPacing& pacing);

  // The rounds the wake gap is measured from (WakeGap::RoundStarted/RoundEnded).
  void RoundStarted();
  void RoundEnded(bool woken, bool claimed);

  // Sleeps `duration`, clamped. Returns true when a stop was requested.
  bool Sleep(std::chrono::milliseconds duration);
  // The idle wait: `duration` clamped as Sleep, ended by a wake-up (LoopClock::IdleFor) no sooner
  // than WakeGap::WakeAt. Returns true when a stop was requested; sets `woken` when a wake-up
  // ended it.
  bool IdleUntilWoken(std::chrono::milliseconds duration, bool& woken);
  // `idle`, shortened to end one millisecond after `next_due_at` (monotonic), never below 1 ms.
  std::chrono::milliseconds UntilNextDue(const std::optional<int64_t>& next_due_at,
                                         std::chrono::milliseconds idle);

 private:
  std::chrono::milliseconds Longest() const;

  std::chrono::milliseconds poll_interval_;
  LoopClock& clock_;
  LoopSignal& signal_;
  const RoomPacing& pacing_;
  WakeGap wake_gap_;
};

}  // namespace room_outbox::relay
