#include "sync_breaker.h"

#include "core/process_registry.h"

namespace room_outbox::internal {

using Verdict = core::ImBreaker::Verdict;

std::shared_ptr<core::ImBreaker> MakeSyncBreaker() {
  return std::make_shared<core::ImBreaker>(kSyncBreakerSettings);
}

Verdict SyncVerdict(const core::PublishOutcome& outcome, bool cut) {
  if (outcome.delivered()) {
    return Verdict::kHealthy;
  }
  if (outcome.status == core::PublishStatus::kNotAttempted) {
    return Verdict::kFailure;  // the publisher's own app breaker is open
  }
  switch (outcome.scope) {
    case core::FailureScope::kApp:
    case core::FailureScope::kGlobalRate:
      return Verdict::kFailure;
    case core::FailureScope::kRoom:
    case core::FailureScope::kUndeliverableRow:
      return Verdict::kHealthy;  // IM answered about this message
    default:
      break;
  }
  if (outcome.status == core::PublishStatus::kUnknown && cut) {
    return Verdict::kInconclusive;
  }
  // An IM error code about the row (e.g. 10002) is IM's own trouble too.
  return Verdict::kFailure;
}

void NoteSyncOutcome(core::ImBreaker& breaker, const core::PublishOutcome& outcome, bool cut,
                     bool probe, int64_t steady_ms, const LogCallback& log) {
  const core::BreakerTransition transition = breaker.Record(
      SyncVerdict(outcome, cut), probe, std::chrono::milliseconds::zero(), steady_ms);
  if (!log) {
    return;
  }
  if (transition == core::BreakerTransition::kOpened) {
    log(LogLevel::kWarn, "sync publish breaker open: IM failing " +
                             std::to_string(breaker.failures_to_open()) +
                             " times in a row; commits leave their events to the relay for " +
                             std::to_string(breaker.cooldown().count()) +
                             "ms, then one probe: error=" + outcome.error);
  } else if (transition == core::BreakerTransition::kClosed) {
    log(LogLevel::kInfo, "sync publish breaker closed: the probe reached IM");
  }
}

std::shared_ptr<core::ImBreaker> ProcessSyncBreaker(const std::string& endpoint,
                                                    uint64_t sdk_app_id) {
  static core::ProcessRegistry<core::ImBreaker> breakers;
  return breakers.Get(core::RegistryKey(endpoint, sdk_app_id), MakeSyncBreaker);
}

}  // namespace room_outbox::internal
