#include "worker/park_policy.h"

namespace room_outbox::relay {

ParkDecision ParkPolicy::Decide(int64_t retry_count, bool permanent) const {
  if (!enabled() || !permanent) {
    return ParkDecision::kRetry;
  }
  // A negative count (never written by the store) counts as none.
  const int64_t attempts = (retry_count > 0 ? retry_count : 0) + 1;
  return attempts >= after_ ? ParkDecision::kPark : ParkDecision::kRetry;
}

bool ParkPolicy::IsPermanent(const core::PublishOutcome& outcome) {
  return !outcome.delivered() && outcome.scope == core::FailureScope::kUndeliverableRow;
}

}  // namespace room_outbox::relay
