// ParkPolicy: whether a failed attempt parks its row ([outbox_worker] park_permanent_after).
//
// A row is parked (status 'parked', last_error kept, set aside until an operator requeues it)
// instead of being marked failed when all of these hold:
//   - park_permanent_after > 0 (0, the default, never parks: a failed row is retried
//     forever);
//   - the attempt failed permanently: the publisher's permanent class
//     (PublishOutcome::scope == FailureScope::kUndeliverableRow: a dissolved group 10010, a body IM
//     refuses or one over the size limit, ...), or an envelope that cannot be decoded;
//   - this attempt is at least the park_permanent_after-th: retry_count (failures recorded
//     before it) + 1 >= park_permanent_after.
// Transient failures (row, room, app, rate-limit scopes) never park a row, however often they
// repeat. retry_count counts every recorded failure of the row, so a row that failed
// transiently before may park after fewer permanent failures than the setting: the setting is
// "attempts, the last one permanent", which is what the store can count.
//
// Pure: plain values in, a decision out; no clock, no store. Thread-safe (immutable).
#pragma once

#include <cstdint>

#include "core/publisher.h"

namespace room_outbox::relay {

enum class ParkDecision {
  kRetry,  // mark the attempt failed: the row stays pending and is retried
  kPark,   // park the row
};

class ParkPolicy {
 public:
  // `park_permanent_after` <= 0: never park.
  explicit ParkPolicy(int64_t park_permanent_after)
      : after_(park_permanent_after > 0 ? park_permanent_after : 0) {}

  // One failed attempt: `retry_count` as claimed (before this attempt), `permanent` whether the
  // failure can never succeed as the row is (see IsPermanent; true for an undecodable row).
  ParkDecision Decide(int64_t retry_count, bool permanent) const;

  // A publish outcome that refuses its row for good (scope kUndeliverableRow).
  static bool IsPermanent(const core::PublishOutcome& outcome);

  bool enabled() const { return after_ > 0; }
  int64_t after() const { return after_; }

 private:
  int64_t after_;
};

}  // namespace room_outbox::relay
