#include "worker/loop_clock.h"

namespace room_outbox::relay {

void LoopSignal::RequestStop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopped_.store(true, std::memory_order_release);
  }
  cv_.notify_all();
}

bool LoopSignal::WaitFor(std::chrono::milliseconds duration) {
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_for(lock, duration, [this] { return stop_requested(); });
}

void LoopSignal::Wake() {
  bool was_pending = false;
  {
    // Under the lock, so a WaitForWake between its check and its wait cannot miss it.
    std::lock_guard<std::mutex> lock(mu_);
    was_pending = woken_.exchange(true, std::memory_order_acq_rel);
  }
  // A wake-up already pending woke every waiter that wants one: a burst notifies once.
  if (!was_pending) cv_.notify_all();
}

bool LoopSignal::WaitForWake(std::chrono::milliseconds duration) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_for(lock, duration, [this] { return stop_requested() || wake_pending(); });
  return stop_requested();
}

bool SystemLoopClock::SleepFor(std::chrono::milliseconds duration, LoopSignal& stop) {
  return stop.WaitFor(duration);
}

bool SystemLoopClock::IdleFor(std::chrono::milliseconds duration, LoopSignal& stop) {
  return stop.WaitForWake(duration);
}

}  // namespace room_outbox::relay
