// The worker loop's time: a Clock plus sleeps that a stop request (and, for the idle sleep, a
// wake-up) ends early. Injected so tests never sleep (tests/mocks/fake_clock.h).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>

#include "core/clock.h"

namespace room_outbox::relay {

// LoopSignal: what ends the loop's waits. A one-way stop flag that can wake a waiting thread,
// plus a wake-up flag (the relay's `[wake] socket`: rows were left for it) that ends only the
// waits that ask for it.
//
// A wake-up is a level, not a count: any number of Wake() calls before the next TakeWake() are
// one pending wake-up (bursts coalesce). It stays pending through WaitFor (the relay's pacing
// waits inside a round never end early, so they cannot spin) until TakeWake() clears it (the
// relay does just before it claims) or WaitForWake returns at once because of it.
//
// Thread-safety: every method may be called from any thread.
class LoopSignal {
 public:
  void RequestStop();
  bool stop_requested() const { return stopped_.load(std::memory_order_acquire); }
  // Waits up to `duration` real time; returns true at once when a stop was (or is) requested.
  // A pending wake-up neither ends this wait nor is consumed by it.
  bool WaitFor(std::chrono::milliseconds duration);

  // Marks a wake-up pending and ends a WaitForWake under way (only the first Wake of a burst
  // notifies: the others find it pending).
  void Wake();
  bool wake_pending() const { return woken_.load(std::memory_order_acquire); }
  // Clears the pending wake-up; returns whether there was one.
  bool TakeWake() { return woken_.exchange(false, std::memory_order_acq_rel); }
  // Waits up to `duration` real time, or until a stop is requested or a wake-up is pending (at
  // once when one already is; it stays pending). Returns true when a stop was requested.
  bool WaitForWake(std::chrono::milliseconds duration);

 private:
  std::atomic<bool> stopped_{false};
  std::atomic<bool> woken_{false};
  std::mutex mu_;
  std::condition_variable cv_;
};

class LoopClock : public core::Clock {
 public:
  // Sleeps `duration` or until `stop` is requested. Returns true when stopped. A pending wake-up
  // does not shorten it.
  virtual bool SleepFor(std::chrono::milliseconds duration, LoopSignal& stop) = 0;
  // The idle sleep between two rounds: as SleepFor, and it also ends (returning false) as soon
  // as a wake-up is pending on `stop`, without clearing it. A clock that cannot wait for a
  // wake-up sleeps the whole duration (this default): the poll stays the safety net.
  virtual bool IdleFor(std::chrono::milliseconds duration, LoopSignal& stop) {
    return SleepFor(duration, stop);
  }
};

// SystemClock's time and real sleeping on the LoopSignal.
class SystemLoopClock final : public LoopClock {
 public:
  int64_t NowMs() override { return system_.NowMs(); }
  int64_t SteadyMs() override { return system_.SteadyMs(); }
  bool SleepFor(std::chrono::milliseconds duration, LoopSignal& stop) override;
  bool IdleFor(std::chrono::milliseconds duration, LoopSignal& stop) override;

 private:
  core::SystemClock system_;
};

}  // namespace room_outbox::relay
