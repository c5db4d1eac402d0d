// PublishAdmission: which message of a PublishMany call goes out next.
//
// The call's messages wait in a queue, in call order. For the one at the front, Next() asks in
// this order:
//   1. the circuit breaker (ImBreaker::Admit), every time the message reaches the front (a
//      budget wait, a 70001 resend), so a breaker opened meanwhile by another message of the call
//      holds it back too. Open: the message is kept back as not attempted, unless the call's own
//      probe is out: then the call waits for the probe's answer. After the cooldown the message
//      becomes the probe and keeps that admission until its verdict is recorded.
//   2. its timeout: the first `parallel` messages count it from the call's start (Publish must
//      return within it), later ones from when they reach a free slot; a stream's message
//      (PublishItem::streamed) from when the feed handed it over.
//   3. the request budget (optional): a token now, or a wait; a wait for the next token that
//      would end at or after the message's deadline keeps it back as rate limited (global rate).
//      Otherwise the caller sleeps once for every message it could start now (the tokens of
//      `ready` queued messages, at most kMaxBudgetBatchWait and never past the front message's
//      deadline), not once per token: waking costs the same whether one request or several go out.
//
// Pure: no I/O and no clock of its own; the caller passes the monotonic time (Clock::SteadyMs)
// of each decision. Not thread-safe: one call, one thread (the publisher's lock).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "core/tencent/im_breaker.h"
#include "core/tencent/process_rate_budget.h"
#include "core/tencent/publish_item.h"

namespace room_outbox::core {

// The outcome of a message the breaker keeps back: no request was made; do not charge the row.
PublishOutcome NotAttemptedOutcome();

// The longest a budget wait gathers tokens for several messages beyond the first one's token:
// short next to a delivery's latency, long enough that a drain held by the budget wakes once per
// batch of requests (10 at 200/s) rather than once per request.
inline constexpr std::chrono::milliseconds kMaxBudgetBatchWait{50};

class PublishAdmission {
 public:
  enum class Kind {
    kSend,           // start `index` now
    kKeptBack,       // `index` is done without a request; its outcome says why
    kWaitForBudget,  // the front message needs a budget token: ask again after `wait`
    kWaitForProbe,   // the call's own probe is out: ask again once an answer came in
    kEmpty,          // nothing is queued
  };
  struct Decision {
    Kind kind = Kind::kEmpty;
    size_t index = 0;
    std::chrono::milliseconds wait{0};  // kWaitForBudget: until the next token (rounded up)
  };

  // `items`, `breaker` and `budget` (null: no request budget) must outlive the admission.
  // `timeout` > 0; `parallel` >= 1 is how many requests the call runs at once.
  PublishAdmission(PublishItems& items, ImBreaker& breaker, SharedRateBudget* budget,
                   std::chrono::milliseconds timeout, size_t parallel, int64_t call_start_ms);

  // Queues `index` behind the others.
  void Enqueue(size_t index) { queue_.push_back(index); }
  // Queues `index` in front of the others (the 70001 resend goes next).
  void Resend(size_t index) { queue_.push_front(index); }
  bool empty() const { return queue_.empty(); }
  size_t size() const { return queue_.size(); }

  // Decides about the front message at `now_ms`; `ready` (>= 1) is how many messages the caller
  // could start now (its free slots), which a budget wait gathers tokens for. kSend and kKeptBack
  // take the front message off the queue.
  Decision Next(int64_t now_ms, size_t ready = 1);
  // The request of `index` went out: while it is the probe, the call waits for its answer.
  void Sent(size_t index);
  // The probe's verdict was recorded: the call no longer waits for it.
  void ProbeRecorded(PublishItem& item);
  // A probe that never reached IM proved nothing: the next request probes instead.
  void ReleaseProbe(PublishItem& item, int64_t now_ms);
  // Ends every message not done yet: kRetryable with `why` (e.g. "publisher busy ..."),
  // releasing a probe among them. The queue is emptied.
  void FailRemaining(const std::string& why, int64_t now_ms);

 private:
  // Starts the message's timeout when it first reaches a slot.
  void StartClock(PublishItem& item, int64_t now_ms);
  // Takes `index` off the front and ends it with `outcome`.
  Decision KeepBack(size_t index, PublishOutcome outcome, int64_t now_ms);
  // The budget's verdict on the front message `index`: nullopt when it took a token.
  std::optional<Decision> AskBudget(size_t index, int64_t now_ms, size_t ready);

  PublishItems& items_;
  ImBreaker& breaker_;
  SharedRateBudget* budget_;
  const std::chrono::milliseconds timeout_;
  const size_t parallel_;
  const int64_t call_start_ms_;
  std::deque<size_t> queue_;
  size_t started_ = 0;            // messages whose timeout runs
  bool probe_in_flight_ = false;  // one of this call's requests is the breaker's probe
};

}  // namespace room_outbox::core
