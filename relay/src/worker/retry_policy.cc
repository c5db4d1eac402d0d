#include "worker/retry_policy.h"

#include <algorithm>
#include <utility>

namespace room_outbox::relay {
namespace {

// last_error is bounded by the store; the log line and the column stay readable when the text
// is short.
constexpr size_t kMaxErrorBytes = 200;

}  // namespace

std::string ShortError(std::string text) {
  if (text.size() <= kMaxErrorBytes) {
    return text;
  }
  size_t cut = kMaxErrorBytes;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) {
    --cut;
  }
  text.resize(cut);
  return text + "...";
}

RetryPolicy::RetryPolicy(std::chrono::milliseconds poll_interval,
                         std::chrono::milliseconds rate_limited_min)
    : poll_interval_(poll_interval), rate_limited_min_(rate_limited_min) {}

std::chrono::milliseconds RetryPolicy::RetryAfter(const core::PublishOutcome& outcome) const {
  if (outcome.status == core::PublishStatus::kRateLimited ||
      outcome.scope == core::FailureScope::kRoom ||
      outcome.scope == core::FailureScope::kGlobalRate) {
    return std::max(poll_interval_, rate_limited_min_);
  }
  return poll_interval_;
}

AttemptVerdict RetryPolicy::Judge(const core::PublishOutcome& outcome) const {
  AttemptVerdict verdict;
  if (outcome.delivered()) {
    verdict.delivered = true;
    return verdict;
  }
  std::string text = core::PublishStatusName(outcome.status);
  if (!outcome.error.empty()) {
    text += ": " + outcome.error;
  }
  verdict.error = ShortError(std::move(text));
  verdict.retry_after = RetryAfter(outcome);
  verdict.dropped = outcome.definite_drop;
  verdict.level =
      outcome.status == core::PublishStatus::kPermanent ? spdlog::level::err : spdlog::level::warn;
  return verdict;
}

AttemptVerdict RetryPolicy::Undecodable(const std::string& why) const {
  AttemptVerdict verdict;
  verdict.error = ShortError("undecodable envelope: " + why);
  verdict.retry_after = poll_interval_;
  verdict.level = spdlog::level::err;
  return verdict;
}

}  // namespace room_outbox::relay
