// What `outbox-relay stats` says about the drain: the arrival and delivery rates between two
// samples of cheap server-side counters (OutboxSample: the server's clock, the table's highest
// id, the pending rows) and the time to drain the backlog at them. No published row is read.
//
//   arrived   = the highest id's growth: rows inserted between the samples (ids an insert took
//               and rolled back, ids a bulk insert such as INSERT ... SELECT reserved beyond its
//               rows, or a cluster's auto_increment_increment, count too; the ETA does not
//               depend on them: they count in both rates)
//   delivered = arrived - the pending rows' growth: rows that left pending or were written
//               settled (delivered by the relay or the hook, types never sent, parked); rows
//               requeued meanwhile count against it
//   eta       = pending / (delivery rate - arrival rate) while that is positive; none otherwise
#pragma once

#include <cstdint>
#include <optional>

#include "ops/ops_store.h"

namespace room_outbox::relay::ops {

struct DrainRates {
  int64_t window_ms = 0;  // between the samples, on the server's clock
  int64_t arrived = 0;
  int64_t delivered = 0;  // never below 0
  double arrival_per_second = 0;
  double delivery_per_second = 0;
  // Seconds until nothing is pending at these rates: 0 when nothing is; none while the backlog
  // does not shrink.
  std::optional<double> drain_eta_seconds;
};

// The rates between `first` and `second` (taken after it). A window of 0 ms or less gives no
// rates and no ETA (drain_eta_seconds is 0 only when nothing is pending).
DrainRates RatesBetween(const OutboxSample& first, const OutboxSample& second);

}  // namespace room_outbox::relay::ops
