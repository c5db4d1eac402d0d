#pragma once
// The relay daemon's health and metrics, started before the worker and taken down after it.

#include <chrono>
#include <memory>

#include "config/config.h"
#include "core/clock.h"
#include "ops/parked_gauge.h"
#include "telemetry/health.h"
#include "telemetry/log_line.h"
#include "telemetry/metrics.h"

namespace room_outbox::relay {

// The process's health and metrics: the systemd watchdog, the heartbeat the worker's clock
// beats, the metrics with their endpoint, and the parked rows gauge (a connection of its own).
// Everything runs on `clock`, the daemon's one clock, which must outlive it.
struct Telemetry {
  explicit Telemetry(core::Clock& clock) : clock(clock), metrics(clock) {}
  core::Clock& clock;
  std::unique_ptr<Watchdog> watchdog;
  std::unique_ptr<Heartbeat> heartbeat;
  Metrics metrics;
  std::unique_ptr<MetricsServer> server;
  std::unique_ptr<ops::ParkedRowsGauge> parked_gauge;
};

// Starts `t`: the watchdog from the environment, the heartbeat, the build info, the metrics
// endpoint when [metrics] listen is set, and the parked rows gauge beside it. False when the
// endpoint cannot be served (logged).
bool StartTelemetry(const Config& config, Logger& logger, Telemetry& t);

// Every claim, wave and sleep slice of the worker beats (health.h); slices short enough for the
// watchdog (at least two beats per WATCHDOG_USEC/2).
std::chrono::milliseconds HeartbeatSlice(const Watchdog* watchdog);

}  // namespace room_outbox::relay
