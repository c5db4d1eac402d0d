// BeatOnUseClock beats the heartbeat whenever the loop uses its clock. It wraps the worker's
// Clock: every NowMs() (each round reads it at least once, at the claim, and once per wave),
// every SteadyMs() (the pace and lease checks inside a round) and every slice of a SleepFor() or
// IdleFor() (sleeps are cut into slices of at most `slice`) beats. This wires the heartbeat
// without a line in the worker; a worker that calls Heartbeat::Beat() itself needs no decorator.
#pragma once

#include <chrono>
#include <cstdint>

#include "telemetry/health.h"
#include "worker/loop_clock.h"

namespace room_outbox::relay {

class BeatOnUseClock final : public LoopClock {
 public:
  // `inner` and `heartbeat` must outlive the clock.
  BeatOnUseClock(LoopClock& inner, Heartbeat& heartbeat,
                 std::chrono::milliseconds slice = std::chrono::seconds(1))
      : inner_(inner), heartbeat_(heartbeat), slice_(slice) {}

  int64_t NowMs() override;
  // The inner clock's monotonic reading; a beat too (the loop reads it for its pace and lease).
  int64_t SteadyMs() override;
  // Sleeps in slices of at most `slice`, beating before each one and after the last.
  bool SleepFor(std::chrono::milliseconds duration, LoopSignal& stop) override;
  // The same slices over the inner IdleFor; ends at the first slice that finds a wake-up pending.
  bool IdleFor(std::chrono::milliseconds duration, LoopSignal& stop) override;

 private:
  LoopClock& inner_;
  Heartbeat& heartbeat_;
  std::chrono::milliseconds slice_;
};

}  // namespace room_outbox::relay
