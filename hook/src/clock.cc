#include "clock.h"

namespace room_outbox {

void StopSignal::RequestStop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopped_.store(true, std::memory_order_release);
  }
  cv_.notify_all();
}

bool StopSignal::WaitFor(std::chrono::milliseconds duration) {
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_for(lock, duration, [this] { return stop_requested(); });
}

void StopSignal::Wake() {
  {
    // Under the lock, so a WaitForWake between its check and its wait cannot miss it.
    std::lock_guard<std::mutex> lock(mu_);
    woken_.store(true, std::memory_order_release);
  }
  cv_.notify_all();
}

bool StopSignal::WaitForWake(std::chrono::milliseconds duration) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_for(lock, duration, [this] { return stop_requested() || wake_pending(); });
  return stop_requested();
}

int64_t SystemClock::NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int64_t SystemClock::SteadyMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

bool SystemClock::SleepFor(std::chrono::milliseconds duration, StopSignal& stop) {
  return stop.WaitFor(duration);
}

bool SystemClock::IdleFor(std::chrono::milliseconds duration, StopSignal& stop) {
  return stop.WaitForWake(duration);
}

}  // namespace room_outbox
