// The completion step of a PublishMany call or a PublishStream: what one finished request means,
// and what it changes.
//
//   TransferOutcome  the request's outcome: IM's answer through the table of im_response.h, or
//                    libcurl's error. A timeout or a connection dropped after the request went
//                    out is kUnknown (IM may have the message: the resend is byte-identical, so
//                    IM can deduplicate it); a timeout before anything was sent is kRetryable.
//   PublishCompletion::Complete, in this order:
//     - rate feedback: only IM's own answers say anything about our rate. A global rate limit
//       (60007, ..., HTTP 429) halves the request budget; any other answer lets it recover. A
//       group over its cap (room scope) says nothing about the other rooms.
//     - the breaker's verdict (BreakerVerdict); the outcome carries the transition it caused,
//       and a probe's admission ends with it.
//     - 70001 (UserSig expired): the sig is renewed and the same body resent once, at once,
//       while the message's deadline allows; otherwise the outcome is final.
//
// No I/O and no clock of its own: the caller passes the monotonic time (Clock::SteadyMs). Not
// thread-safe: one call, one thread.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "core/tencent/im_breaker.h"
#include "core/tencent/process_rate_budget.h"
#include "core/tencent/publish_admission.h"
#include "core/tencent/publish_item.h"
#include "core/tencent/transfer_pool.h"
#include "core/tencent/usersig.h"

namespace room_outbox::core {

// `timeout` is the message's whole time (for "timeout after <timeout>ms"); `target` names the
// endpoint in libcurl's errors ("POST host:port").
PublishOutcome TransferOutcome(const TransferPool::Finished& finished,
                               std::chrono::milliseconds timeout, std::string_view target);

// What an outcome says about the app as a whole (see ImBreaker::Verdict): only IM's own JSON
// answers about the message prove the app works; no answer proves nothing.
ImBreaker::Verdict BreakerVerdict(const PublishOutcome& outcome);

class PublishCompletion {
 public:
  // Every argument must outlive the completion; `budget` may be null (no request budget).
  PublishCompletion(PublishItems& items, PublishAdmission& admission, ImBreaker& breaker,
                    SharedRateBudget* budget, UserSigCache& sig_cache)
      : items_(items),
        admission_(admission),
        breaker_(breaker),
        budget_(budget),
        sig_cache_(sig_cache) {}

  // Completes message `index` with `outcome` at `now_ms`: final (done), or queued again at the
  // front of the admission for the 70001 resend.
  void Complete(size_t index, PublishOutcome outcome, int64_t now_ms);

 private:
  // IM's answers slow or raise the budget; a global rate limit it took says so (budget_slowed).
  void FeedBudget(PublishOutcome& outcome);

  PublishItems& items_;
  PublishAdmission& admission_;
  ImBreaker& breaker_;
  SharedRateBudget* budget_;
  UserSigCache& sig_cache_;
};

}  // namespace room_outbox::core
