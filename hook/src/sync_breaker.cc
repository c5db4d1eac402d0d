#include "sync_breaker.h"

#include <map>
#include <utility>

namespace room_outbox::internal {

SyncBreaker::SyncBreaker(int failures_to_open, std::chrono::milliseconds cooldown)
    : failures_to_open_(failures_to_open > 0 ? failures_to_open : kFailuresToOpen),
      cooldown_(cooldown.count() > 0 ? cooldown : kCooldown) {}

SyncBreaker::Admission SyncBreaker::Admit(int64_t steady_ms) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!open_) {
    return Admission::kAllow;
  }
  if (probe_out_ || steady_ms < reopens_at_ms_) {
    return Admission::kSkip;
  }
  probe_out_ = true;
  return Admission::kProbe;
}

SyncBreaker::Transition SyncBreaker::Record(Verdict verdict, bool probe, int64_t steady_ms) {
  std::lock_guard<std::mutex> lock(mu_);
  if (probe) {
    probe_out_ = false;
  }
  if (verdict == Verdict::kInconclusive) {
    return Transition::kNone;
  }
  if (verdict == Verdict::kHealthy) {
    failures_ = 0;
    if (open_ && probe) {
      open_ = false;
      return Transition::kClosed;
    }
    return Transition::kNone;
  }
  if (open_) {
    // Only the probe's failure starts a new cooldown; publishes that were under way when the
    // breaker opened do not push it out.
    if (!probe) return Transition::kNone;
    reopens_at_ms_ = steady_ms + cooldown_.count();
    return Transition::kReopened;
  }
  if (++failures_ < failures_to_open_) {
    return Transition::kNone;
  }
  open_ = true;
  reopens_at_ms_ = steady_ms + cooldown_.count();
  return Transition::kOpened;
}

void SyncBreaker::CancelProbe() {
  std::lock_guard<std::mutex> lock(mu_);
  probe_out_ = false;
}

bool SyncBreaker::is_open() const {
  std::lock_guard<std::mutex> lock(mu_);
  return open_;
}

SyncBreaker::Verdict SyncVerdict(const core::PublishOutcome& outcome, bool cut) {
  if (outcome.delivered()) {
    return SyncBreaker::Verdict::kHealthy;
  }
  if (outcome.status == core::PublishStatus::kNotAttempted) {
    return SyncBreaker::Verdict::kImFailing;  // the publisher's own app breaker is open
  }
  switch (outcome.scope) {
    case core::FailureScope::kApp:
    case core::FailureScope::kGlobalRate:
      return SyncBreaker::Verdict::kImFailing;
    case core::FailureScope::kRoom:
    case core::FailureScope::kPermanentRow:
      return SyncBreaker::Verdict::kHealthy;  // IM answered about this message
    default:
      break;
  }
  if (outcome.status == core::PublishStatus::kUnknown && cut) {
    return SyncBreaker::Verdict::kInconclusive;
  }
  // An IM error code about the row (e.g. 10002) is IM's own trouble too.
  return SyncBreaker::Verdict::kImFailing;
}

void NoteSyncOutcome(SyncBreaker& breaker, const core::PublishOutcome& outcome, bool cut,
                     bool probe, int64_t steady_ms, const LogCallback& log) {
  const SyncBreaker::Transition transition =
      breaker.Record(SyncVerdict(outcome, cut), probe, steady_ms);
  if (!log) {
    return;
  }
  if (transition == SyncBreaker::Transition::kOpened) {
    log(LogLevel::kWarn, "sync publish breaker open: IM failing " +
                             std::to_string(SyncBreaker::kFailuresToOpen) +
                             " times in a row; commits leave their events to the relay for " +
                             std::to_string(breaker.cooldown().count()) +
                             "ms, then one probe: error=" + outcome.error);
  } else if (transition == SyncBreaker::Transition::kClosed) {
    log(LogLevel::kInfo, "sync publish breaker closed: the probe reached IM");
  }
}

std::shared_ptr<SyncBreaker> ProcessSyncBreaker(const std::string& endpoint, uint64_t sdk_app_id) {
  struct Registry {
    std::mutex mu;
    std::map<std::pair<std::string, uint64_t>, std::weak_ptr<SyncBreaker>> breakers;
  };
  // Never destroyed: a Hook that outlives static destruction must still find it.
  static Registry* registry = new Registry;
  std::lock_guard<std::mutex> lock(registry->mu);
  for (auto it = registry->breakers.begin(); it != registry->breakers.end();) {
    it = it->second.expired() ? registry->breakers.erase(it) : std::next(it);
  }
  auto& slot = registry->breakers[{endpoint, sdk_app_id}];
  if (auto existing = slot.lock()) {
    return existing;
  }
  auto breaker = std::make_shared<SyncBreaker>();
  slot = breaker;
  return breaker;
}

}  // namespace room_outbox::internal
