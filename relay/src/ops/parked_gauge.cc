#include "ops/parked_gauge.h"

#include <algorithm>

#include "ops/ops_store.h"

namespace room_outbox::relay::ops {

std::unique_ptr<ParkedRowsGauge> ParkedRowsGauge::Start(const MysqlOptions& mysql, Metrics& metrics,
                                                        std::chrono::milliseconds interval) {
  // A short connect timeout: the gauge must not hold up the shutdown for long.
  core::SecretOwner<MysqlOptions> options = mysql;
  options.connect_timeout = std::min(options.connect_timeout, std::chrono::milliseconds(2000));
  std::unique_ptr<ParkedRowsGauge> gauge(
      new ParkedRowsGauge(options, metrics, std::max(interval, std::chrono::milliseconds(100))));
  gauge->thread_ = std::thread([g = gauge.get()] { g->Loop(); });
  return gauge;
}

ParkedRowsGauge::~ParkedRowsGauge() {
  stop_.RequestStop();
  if (thread_.joinable()) {
    thread_.join();
  }
}

void ParkedRowsGauge::Loop() {
  std::unique_ptr<OpsStore> store;
  while (!stop_.stop_requested()) {
    if (!store) {
      auto connected = OpsStore::Connect(mysql_);
      if (connected) store = std::move(*connected);
    }
    if (store) {
      auto parked = store->CountParked();
      if (parked) {
        metrics_.SetParkedRows(*parked);
      } else {
        store.reset();  // reconnect on the next pass
        metrics_.SetParkedRows(-1);
      }
    } else {
      metrics_.SetParkedRows(-1);
    }
    if (stop_.WaitFor(interval_)) break;
  }
}

}  // namespace room_outbox::relay::ops
