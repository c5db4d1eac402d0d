#include "telemetry/health.h"

#include <systemd/sd-daemon.h>

#include <algorithm>

namespace room_outbox::relay {

std::unique_ptr<Watchdog> Watchdog::FromEnvironment() {
  uint64_t usec = 0;
  // > 0: WATCHDOG_USEC is set and WATCHDOG_PID is ours or unset; 0: no watchdog; < 0: malformed
  // variables, which are treated as no watchdog.
  if (sd_watchdog_enabled(/*unset_environment=*/0, &usec) <= 0 || usec == 0) {
    return nullptr;
  }
  return std::make_unique<Watchdog>(std::chrono::microseconds(usec));
}

bool Watchdog::Kick(int64_t steady_ms) {
  const int64_t half_ms = std::max<int64_t>(1, interval_.count() / 2000);
  if (kicked_ && steady_ms - last_kick_ms_ < half_ms) {
    return false;
  }
  kicked_ = true;
  last_kick_ms_ = steady_ms;
  // Outside systemd (no NOTIFY_SOCKET) sd_notify is a no-op; a failed send changes nothing the
  // relay could act on, and systemd notices the missing kick by itself.
  (void)sd_notify(0, "WATCHDOG=1");
  kicks_.fetch_add(1, std::memory_order_relaxed);
  return true;
}

Heartbeat::Heartbeat(core::Clock& clock, Watchdog* watchdog)
    : clock_(clock), watchdog_(watchdog), last_ms_(clock_.SteadyMs()) {}

Heartbeat::Heartbeat(Watchdog* watchdog)
    : clock_(system_clock_), watchdog_(watchdog), last_ms_(clock_.SteadyMs()) {}

void Heartbeat::Beat(int64_t steady_ms) {
  last_ms_.store(steady_ms, std::memory_order_relaxed);
  beats_.fetch_add(1, std::memory_order_relaxed);
  if (watchdog_ != nullptr) {
    watchdog_->Kick(steady_ms);
  }
}

int64_t Heartbeat::AgeMs(int64_t steady_ms) const {
  return std::max<int64_t>(0, steady_ms - last_ms_.load(std::memory_order_relaxed));
}

std::chrono::milliseconds HealthStaleAfter(std::chrono::milliseconds poll_interval) {
  return std::max<std::chrono::milliseconds>(3 * poll_interval, std::chrono::seconds(60));
}

}  // namespace room_outbox::relay
