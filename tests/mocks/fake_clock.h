// A Clock whose time moves only when told to, or by the sleeps it is asked for. It records
// every requested sleep so tests can assert on the pacing of a loop. Wall time (NowMs) and
// monotonic time (SteadyMs) move together, except that StepWall moves the wall clock alone, as
// an NTP step or an operator's `date -s` does. An idle sleep (IdleFor) entered with a wake-up
// pending ends at once: it is recorded as 0 ms and time does not move.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <vector>

#include "worker/loop_clock.h"

namespace room_outbox::testing {

class FakeClock : public relay::LoopClock {
 public:
  explicit FakeClock(int64_t now_ms = 1'700'000'000'000) : now_ms_(now_ms) {}

  int64_t NowMs() override {
    std::lock_guard<std::mutex> lock(mu_);
    return now_ms_;
  }

  int64_t SteadyMs() override {
    std::lock_guard<std::mutex> lock(mu_);
    return steady_ms_;
  }

  // Advances time by `duration` at once (no real waiting) and returns whether a stop was
  // requested. `on_sleep`, when set, runs after each sleep (e.g. to request a stop after N).
  bool SleepFor(std::chrono::milliseconds duration, relay::LoopSignal& stop) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      sleeps_.push_back(duration);
      now_ms_ += duration.count();
      steady_ms_ += duration.count();
    }
    if (on_sleep) {
      on_sleep();
    }
    return stop.stop_requested();
  }

  // As SleepFor, but with a wake-up pending on `stop` it returns at once (a 0 ms sleep) and
  // leaves the wake-up pending, as SystemClock does.
  bool IdleFor(std::chrono::milliseconds duration, relay::LoopSignal& stop) override {
    return SleepFor(stop.wake_pending() ? std::chrono::milliseconds(0) : duration, stop);
  }

  void Advance(std::chrono::milliseconds duration) {
    std::lock_guard<std::mutex> lock(mu_);
    now_ms_ += duration.count();
    steady_ms_ += duration.count();
  }

  // Steps the wall clock alone (forward or back); monotonic time does not move.
  void StepWall(std::chrono::milliseconds step) {
    std::lock_guard<std::mutex> lock(mu_);
    now_ms_ += step.count();
  }

  std::vector<std::chrono::milliseconds> sleeps() {
    std::lock_guard<std::mutex> lock(mu_);
    return sleeps_;
  }

  std::function<void()> on_sleep;

 private:
  std::mutex mu_;
  int64_t now_ms_;
  int64_t steady_ms_ = 5'000'000;
  std::vector<std::chrono::milliseconds> sleeps_;
};

}  // namespace room_outbox::testing
