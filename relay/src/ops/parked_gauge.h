// ParkedRowsGauge: keeps room_outbox_parked_rows current for /metrics, from a thread of its own
// with its own database connection (OpsStore), one index count every `interval`. The worker's
// RelayStore::Stats does not count parked rows; this keeps the gauge (and the
// RoomOutboxParkedRows alert) truthful without touching the worker loop. While the count cannot
// be read the gauge is unknown (NaN), never a stale number.
//
// Started only when the metrics endpoint is on. The destructor stops and joins the thread; a
// count in progress against a hung server ends within the connection's socket timeout.
#pragma once

#include <chrono>
#include <memory>
#include <thread>

#include "core/wipe.h"
#include "room_outbox/options.h"
#include "telemetry/metrics.h"
#include "worker/loop_clock.h"

namespace room_outbox::relay::ops {

class ParkedRowsGauge {
 public:
  // `metrics` must outlive the gauge.
  static std::unique_ptr<ParkedRowsGauge> Start(const MysqlOptions& mysql, Metrics& metrics,
                                                std::chrono::milliseconds interval);
  ~ParkedRowsGauge();
  ParkedRowsGauge(const ParkedRowsGauge&) = delete;
  ParkedRowsGauge& operator=(const ParkedRowsGauge&) = delete;

 private:
  ParkedRowsGauge(const MysqlOptions& mysql, Metrics& metrics, std::chrono::milliseconds interval)
      : mysql_(mysql), metrics_(metrics), interval_(interval) {}
  void Loop();

  core::SecretOwner<MysqlOptions> mysql_;
  Metrics& metrics_;
  std::chrono::milliseconds interval_;
  LoopSignal stop_;
  std::thread thread_;
};

}  // namespace room_outbox::relay::ops
