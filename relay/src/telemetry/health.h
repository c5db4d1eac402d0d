// Liveness of the worker loop: a Heartbeat the loop beats and the systemd watchdog it feeds
// (daemon/beat_on_use_clock.h beats it on the loop's behalf).
//
//   Heartbeat   Beat() from the worker thread after each round and each sleep slice; AgeMs() /
//               Fresh() from any thread (/healthz, the metrics). A loop wedged in a call stops
//               beating, and /healthz turns 503 once the age passes HealthStaleAfter().
//   Watchdog    WATCHDOG=1 over sd_notify, at most once per half of WATCHDOG_USEC, sent from
//               Beat(): systemd's WatchdogSec= restarts a relay whose loop stopped beating, even
//               though its /metrics thread still answers.
//
// Thread-safety: Beat() from one thread (the worker); the readers from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>

#include "core/clock.h"

namespace room_outbox::relay {

class Watchdog {
 public:
  // The watchdog systemd asked for: WATCHDOG_USEC set and WATCHDOG_PID this process or unset
  // (sd_watchdog_enabled). nullptr when there is none.
  static std::unique_ptr<Watchdog> FromEnvironment();

  explicit Watchdog(std::chrono::microseconds interval) : interval_(interval) {}
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  // Sends WATCHDOG=1 unless one was sent less than interval/2 ago. Returns true when it sent.
  bool Kick(int64_t steady_ms);
  std::chrono::microseconds interval() const { return interval_; }
  uint64_t kicks() const { return kicks_.load(std::memory_order_relaxed); }

 private:
  std::chrono::microseconds interval_;
  int64_t last_kick_ms_ = 0;
  bool kicked_ = false;
  std::atomic<uint64_t> kicks_{0};
};

class Heartbeat {
 public:
  // On `clock`'s monotonic time (SteadyMs; the daemon passes the worker's inner clock, never a
  // clock that beats this heartbeat). `clock` and `watchdog` (optional) must outlive the
  // heartbeat. The age counts from construction until the first beat.
  explicit Heartbeat(core::Clock& clock, Watchdog* watchdog = nullptr);
  // The same on a SystemClock of its own.
  explicit Heartbeat(Watchdog* watchdog = nullptr);
  Heartbeat(const Heartbeat&) = delete;
  Heartbeat& operator=(const Heartbeat&) = delete;

  void Beat() { Beat(clock_.SteadyMs()); }
  void Beat(int64_t steady_ms);

  // Milliseconds since the last beat. Any thread: the clock's SteadyMs must be thread-safe.
  int64_t AgeMs() const { return AgeMs(clock_.SteadyMs()); }
  int64_t AgeMs(int64_t steady_ms) const;
  bool Fresh(std::chrono::milliseconds max_age) const { return AgeMs() <= max_age.count(); }
  uint64_t beats() const { return beats_.load(std::memory_order_relaxed); }

 private:
  core::SystemClock system_clock_;  // the clock unless one was given
  core::Clock& clock_;
  Watchdog* watchdog_;
  std::atomic<int64_t> last_ms_;
  std::atomic<uint64_t> beats_{0};
};

// How old a heartbeat may get before /healthz reports the loop wedged:
// max(3 x poll_interval, 60s). 60 s covers one database call blocked up to its 30 s socket read
// timeout plus a reconnect, and the slowest sleep slice; a loop that goes longer without a beat is
// stuck, not slow.
std::chrono::milliseconds HealthStaleAfter(std::chrono::milliseconds poll_interval);


}  // namespace room_outbox::relay
