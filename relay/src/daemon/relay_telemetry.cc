#include "daemon/relay_telemetry.h"

#include <algorithm>
#include <string>
#include <utility>

#include "daemon/build_info.h"
#include "daemon/lifecycle_log.h"

namespace room_outbox::relay {
namespace {

using std::chrono::milliseconds;

// The /metrics endpoint when [metrics] listen is set (null when not); an error is logged.
core::Result<std::unique_ptr<MetricsServer>> ServeMetrics(const Config& config, Metrics& metrics,
                                                          Logger& logger, HealthOptions health) {
  if (config.metrics.listen.empty()) {
    return std::unique_ptr<MetricsServer>();
  }
  auto started = MetricsServer::Start(config.metrics.listen, metrics, health);
  if (!started) {
    logger.Error(Lifecycle("cannot serve metrics", config)
                     .Add("listen", config.metrics.listen)
                     .Add("error", started.error().message));
    return started;
  }
  logger.Info(Lifecycle("metrics endpoint listening", config)
                  .Add("url", "http://" + config.metrics.listen + "/metrics"));
  return started;
}

}  // namespace

bool StartTelemetry(const Config& config, Logger& logger, Telemetry& t) {
  t.watchdog = Watchdog::FromEnvironment();
  t.heartbeat = std::make_unique<Heartbeat>(t.clock, t.watchdog.get());
  t.metrics.SetBuildInfo(Version(), Revision());
  t.metrics.AttachHeartbeat(t.heartbeat.get());
  if (t.watchdog) {
    const auto interval = std::chrono::duration_cast<milliseconds>(t.watchdog->interval());
    logger.Info(Lifecycle("systemd watchdog on", config)
                    .Add("watchdog_interval_ms", static_cast<int64_t>(interval.count())));
  }
  auto server = ServeMetrics(
      config, t.metrics, logger,
      HealthOptions{t.heartbeat.get(), HealthStaleAfter(config.outbox_worker.poll_interval)});
  if (!server) {
    return false;
  }
  t.server = std::move(*server);
  // room_outbox_parked_rows, counted on a connection of its own (ops/parked_gauge.h).
  if (t.server) {
    t.parked_gauge = ops::ParkedRowsGauge::Start(config.mysql, t.metrics, std::chrono::seconds(15));
  }
  return true;
}

milliseconds HeartbeatSlice(const Watchdog* watchdog) {
  const milliseconds slice = std::chrono::seconds(1);
  if (watchdog == nullptr) {
    return slice;
  }
  return std::clamp(std::chrono::duration_cast<milliseconds>(watchdog->interval() / 4),
                    milliseconds(10), slice);
}

}  // namespace room_outbox::relay
