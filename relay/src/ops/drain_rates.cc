#include "ops/drain_rates.h"

#include <algorithm>

namespace room_outbox::relay::ops {

DrainRates RatesBetween(const OutboxSample& first, const OutboxSample& second) {
  DrainRates rates;
  rates.window_ms = second.server_now_ms - first.server_now_ms;
  if (second.pending == 0) {
    rates.drain_eta_seconds = 0.0;
  }
  if (rates.window_ms <= 0) {
    rates.window_ms = 0;
    return rates;
  }
  rates.arrived = std::max<int64_t>(0, second.max_id - first.max_id);
  rates.delivered = std::max<int64_t>(0, rates.arrived - (second.pending - first.pending));
  const double seconds = static_cast<double>(rates.window_ms) / 1000.0;
  rates.arrival_per_second = static_cast<double>(rates.arrived) / seconds;
  rates.delivery_per_second = static_cast<double>(rates.delivered) / seconds;
  const double shrinking = rates.delivery_per_second - rates.arrival_per_second;
  if (second.pending > 0 && shrinking > 0) {
    rates.drain_eta_seconds = static_cast<double>(second.pending) / shrinking;
  }
  return rates;
}

}  // namespace room_outbox::relay::ops
