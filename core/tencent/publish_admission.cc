#include "core/tencent/publish_admission.h"

#include <algorithm>
#include <utility>

namespace room_outbox::core {

PublishOutcome NotAttemptedOutcome() {
  PublishOutcome out;
  out.status = PublishStatus::kNotAttempted;
  out.scope = FailureScope::kApp;
  out.error = "not attempted: IM circuit breaker open";
  return out;
}

PublishAdmission::PublishAdmission(PublishItems& items, ImBreaker& breaker,
                                   SharedRateBudget* budget, std::chrono::milliseconds timeout,
                                   size_t parallel, int64_t call_start_ms)
    : items_(items),
      breaker_(breaker),
      budget_(budget),
      timeout_(timeout),
      parallel_(parallel),
      call_start_ms_(call_start_ms) {}

PublishAdmission::Decision PublishAdmission::Next(int64_t now_ms, size_t ready) {
  if (queue_.empty()) {
    return Decision{};
  }
  const size_t index = queue_.front();
  PublishItem& item = items_[index];
  if (!item.probe) {
    const ImBreaker::Admission admission = breaker_.Admit(now_ms);
    if (admission == ImBreaker::Admission::kReject) {
      if (probe_in_flight_) {
        return Decision{Kind::kWaitForProbe, index};  // our own probe decides for the rest
      }
      return KeepBack(index, NotAttemptedOutcome(), now_ms);
    }
    item.probe = admission == ImBreaker::Admission::kProbe;
  }
  StartClock(item, now_ms);
  if (std::optional<Decision> held = AskBudget(index, now_ms, ready)) {
    return *held;
  }
  queue_.pop_front();
  return Decision{Kind::kSend, index};
}

std::optional<PublishAdmission::Decision> PublishAdmission::AskBudget(size_t index, int64_t now_ms,
                                                                      size_t ready) {
  using std::chrono::microseconds;
  if (budget_ == nullptr) {
    return std::nullopt;
  }
  const microseconds wait = budget_->TryAcquire();
  if (wait == microseconds::zero()) {
    return std::nullopt;
  }
  const microseconds left = std::chrono::milliseconds(items_[index].deadline_ms - now_ms);
  if (wait >= left) {
    PublishOutcome limited;
    limited.status = PublishStatus::kRateLimited;
    limited.scope = FailureScope::kGlobalRate;
    limited.error = "request budget: no slot within " + std::to_string(timeout_.count()) + "ms";
    return KeepBack(index, std::move(limited), now_ms);
  }
  // One sleep for the tokens of every message that could start now, within the batch bound and
  // the front message's time.
  microseconds sleep = wait;
  const size_t batch = std::min(ready, queue_.size());
  if (batch > 1) {
    const microseconds gather =
        std::min(budget_->TimeUntil(batch), wait + microseconds(kMaxBudgetBatchWait));
    sleep = std::max(wait, std::min(gather, left - microseconds(1000)));
  }
  return Decision{Kind::kWaitForBudget, index, std::chrono::ceil<std::chrono::milliseconds>(sleep)};
}

void PublishAdmission::StartClock(PublishItem& item, int64_t now_ms) {
  if (item.started) {
    return;
  }
  item.started = true;
  if (item.streamed) {
    item.start_ms = item.ready_ms;
  } else {
    item.start_ms = started_ < parallel_ ? call_start_ms_ : now_ms;
  }
  item.deadline_ms = item.start_ms + timeout_.count();
  ++started_;
}

PublishAdmission::Decision PublishAdmission::KeepBack(size_t index, PublishOutcome outcome,
                                                      int64_t now_ms) {
  PublishItem& item = items_[index];
  queue_.pop_front();
  item.outcome = std::move(outcome);
  item.done = true;
  ReleaseProbe(item, now_ms);
  return Decision{Kind::kKeptBack, index};
}

void PublishAdmission::Sent(size_t index) {
  probe_in_flight_ = probe_in_flight_ || items_[index].probe;
}

void PublishAdmission::ProbeRecorded(PublishItem& item) {
  item.probe = false;  // recorded: a 70001 resend of it is not a second probe
  probe_in_flight_ = false;
}

void PublishAdmission::ReleaseProbe(PublishItem& item, int64_t now_ms) {
  if (item.probe) {
    (void)breaker_.Record(ImBreaker::Verdict::kInconclusive, true,
                          std::chrono::milliseconds::zero(), now_ms);
    item.probe = false;
  }
}

void PublishAdmission::FailRemaining(const std::string& why, int64_t now_ms) {
  for (PublishItem& item : items_) {
    if (!item.done) {
      item.outcome = PublishOutcome{};
      item.outcome.status = PublishStatus::kRetryable;
      item.outcome.error = why;
      item.done = true;
      ReleaseProbe(item, now_ms);
    }
  }
  queue_.clear();
}

}  // namespace room_outbox::core
