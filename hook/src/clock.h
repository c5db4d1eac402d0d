// Time and stopping, injected so tests never sleep or read the real clock.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace room_outbox {

// A one-way stop flag that can wake a waiting thread. Thread-safe.
class StopSignal {
 public:
  void RequestStop();
  bool stop_requested() const { return stopped_.load(std::memory_order_acquire); }
  // Waits up to `duration` real time; returns true at once when a stop was (or is) requested.
  bool WaitFor(std::chrono::milliseconds duration);

 private:
  std::atomic<bool> stopped_{false};
  std::mutex mu_;
  std::condition_variable cv_;
};

class Clock {
 public:
  virtual ~Clock() = default;
  // Unix epoch milliseconds (what the outbox stores).
  virtual int64_t NowMs() = 0;
  // Milliseconds on a monotonic clock with an arbitrary origin, for durations inside one
  // process (pacing, the lease left of a claim, sleeps). Never steps back.
  virtual int64_t SteadyMs() = 0;
  // Sleeps `duration` or until `stop` is requested. Returns true when stopped.
  virtual bool SleepFor(std::chrono::milliseconds duration, StopSignal& stop) = 0;
};

// The wall clock, std::chrono::steady_clock and real sleeping.
class SystemClock final : public Clock {
 public:
  int64_t NowMs() override;
  int64_t SteadyMs() override;
  bool SleepFor(std::chrono::milliseconds duration, StopSignal& stop) override;
};

}  // namespace room_outbox
