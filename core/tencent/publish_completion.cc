#include "core/tencent/publish_completion.h"

#include <string>
#include <utility>

#include "core/tencent/curl_error.h"
#include "core/tencent/im_response.h"

namespace room_outbox::core {
namespace {

bool DroppedAfterSend(CURLcode code) {
  return code == CURLE_GOT_NOTHING || code == CURLE_RECV_ERROR || code == CURLE_PARTIAL_FILE ||
         code == CURLE_HTTP2_STREAM || code == CURLE_WEIRD_SERVER_REPLY;
}

}  // namespace

PublishOutcome TransferOutcome(const TransferPool::Finished& finished,
                               std::chrono::milliseconds timeout, std::string_view target) {
  if (finished.result == CURLE_OK) {
    return ClassifyImResponse(finished.http_status, finished.response);
  }
  PublishOutcome out;
  out.http_status = finished.http_status;
  if (finished.too_large) {
    out.status = PublishStatus::kUnknown;
    out.error =
        "IM response larger than " + std::to_string(TransferPool::kMaxResponseBytes) + " bytes";
    return out;
  }
  if (finished.result == CURLE_OPERATION_TIMEDOUT) {
    out.status = finished.sent ? PublishStatus::kUnknown : PublishStatus::kRetryable;
    out.error = "timeout after " + std::to_string(timeout.count()) + "ms" +
                (finished.sent ? "" : " before the request was sent");
    return out;
  }
  Error error = FromCurlCode(finished.result, "curl_easy_perform(" + std::string(target) + ")",
                             RedactCurlDetail(finished.curl_detail));
  if (finished.sent && DroppedAfterSend(finished.result)) {
    out.status = PublishStatus::kUnknown;  // IM may have acted on it before the line dropped
  } else if (IsRetryable(error)) {
    out.status = PublishStatus::kRetryable;
  } else {
    out.status = PublishStatus::kPermanent;
  }
  out.error = std::move(error.message);
  return out;
}

ImBreaker::Verdict BreakerVerdict(const PublishOutcome& outcome) {
  if (outcome.scope == FailureScope::kApp) {
    return ImBreaker::Verdict::kFailure;
  }
  if (outcome.http_status == 200 && (outcome.status == PublishStatus::kPublished ||
                                     outcome.im_error_code != 0 || outcome.definite_drop)) {
    return ImBreaker::Verdict::kHealthy;
  }
  return ImBreaker::Verdict::kInconclusive;
}

void PublishCompletion::Complete(size_t index, PublishOutcome outcome, int64_t now_ms) {
  PublishItem& item = items_[index];
  FeedBudget(outcome);
  outcome.breaker =
      breaker_.Record(BreakerVerdict(outcome), item.probe, outcome.min_cooldown, now_ms);
  if (item.probe) {
    admission_.ProbeRecorded(item);
  }
  if (outcome.im_error_code == kImErrorUserSigExpired && !item.sig_renewed &&
      now_ms < item.deadline_ms) {
    // The sig ran out (clock skew, or IM's view of it): renew and resend the same body.
    sig_cache_.Invalidate();
    item.sig_renewed = true;
    admission_.Resend(index);
    return;
  }
  item.outcome = std::move(outcome);
  item.done = true;
}

void PublishCompletion::FeedBudget(PublishOutcome& outcome) {
  if (budget_ == nullptr || outcome.http_status == 0) {
    return;  // only IM's own answers say anything about our rate
  }
  if (outcome.scope == FailureScope::kGlobalRate) {
    budget_->OnRateLimited();
    outcome.budget_slowed = true;
  } else {
    budget_->OnCleanAnswer();
  }
}

}  // namespace room_outbox::core
