// TencentImPublisher (im_publisher.h): PublishStream, a claim's messages as one stream: a room's
// next message starts as soon as the feed has it ready and admission lets it out.
#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/tencent/im_publisher.h"

namespace room_outbox::core::im {

void TencentImPublisher::PublishStream(MessageFeed& feed, milliseconds timeout,
                                       size_t max_in_flight) {
  if (timeout <= milliseconds::zero()) {
    timeout = kDefaultTimeout;
  }
  std::unique_lock<std::timed_mutex> lock(mu_, std::defer_lock);
  size_t parallel = std::clamp<size_t>(max_in_flight, 1, kImPublisherPoolSize);
  if (const std::string why_not = Ready(lock, timeout, parallel); !why_not.empty()) {
    // No request can be made: every message the feed has ready now fails, and the stream ends.
    while (std::optional<FeedMessage> next = feed.Next()) {
      PublishOutcome failed;
      failed.status = PublishStatus::kRetryable;
      failed.error = why_not;
      feed.Done(next->tag, std::move(failed));
    }
    return;
  }
  PublishItems items;
  PublishAdmission admission(items, breaker_, budget_.get(), timeout, parallel, clock_.SteadyMs());
  RunStream(feed, items, admission, parallel);
}

// Each pass: take what the feed has ready while slots are free, start what admission lets out,
// hand over what is done (an outcome can make a room's next message ready: ask again at once),
// then wait for answers (the feed's Pause bounds the wait) or, with nothing in flight, for the
// feed (Idle), which ends the stream when it has no more.
void TencentImPublisher::RunStream(MessageFeed& feed, PublishItems& items,
                                   PublishAdmission& admission, size_t parallel) {
  PublishCompletion completion(items, admission, breaker_, budget_.get(), sig_cache_);
  JsonWriter body;
  JsonWriter scratch;
  std::vector<TransferPool::Finished> finished;
  size_t first_unreported = 0;
  for (;;) {
    Pull(feed, items, admission, parallel, body, scratch);
    const StartPass pass = StartAdmitted(items, admission, parallel, clock_.SteadyMs());
    if (Report(feed, items, first_unreported) > 0) {
      continue;
    }
    if (pool_->active() == 0 && admission.empty()) {
      if (!feed.Idle()) return;
      continue;
    }
    if (auto awaited = AwaitStream(feed, items, admission, parallel, pass, completion, finished);
        !awaited) {
      Abandon(admission, awaited.error());  // what is not done fails; the feed hears it next pass
    }
  }
}

// Takes the feed's ready messages while they could start now.
void TencentImPublisher::Pull(MessageFeed& feed, PublishItems& items, PublishAdmission& admission,
                              size_t parallel, JsonWriter& body, JsonWriter& scratch) {
  while (admission.size() + pool_->active() < parallel) {
    std::optional<FeedMessage> next = feed.Next();
    if (!next) {
      return;
    }
    const int64_t now_ms = clock_.SteadyMs();
    PublishItem& item =
        items.emplace_back(PrepareItem(*next->message, breaker_.RejectsAt(now_ms), body, scratch));
    item.streamed = true;
    item.ready_ms = now_ms;
    item.feed_tag = next->tag;
    if (!item.done) {
      admission.Enqueue(items.size() - 1);
    }
  }
}

size_t TencentImPublisher::Report(MessageFeed& feed, PublishItems& items,
                                  size_t& first_unreported) {
  const int64_t now_ms = clock_.SteadyMs();
  size_t reported = 0;
  for (size_t i = first_unreported; i < items.size(); ++i) {
    PublishItem& item = items[i];
    if (!item.done || item.reported) {
      continue;
    }
    item.reported = true;
    if (item.outcome.attempted()) {
      item.outcome.latency = milliseconds(now_ms - (item.started ? item.start_ms : item.ready_ms));
    }
    item.body.clear();
    item.body.shrink_to_fit();  // a long stream keeps its items, not their bodies
    feed.Done(item.feed_tag, std::move(item.outcome));
    ++reported;
  }
  while (first_unreported < items.size() && items[first_unreported].reported) {
    ++first_unreported;
  }
  return reported;
}

// With requests in flight (or a budget wait): waits for socket activity, a curl timer, the budget
// or the feed's next ready message, then completes what finished; libcurl's error when it failed.
Result<void> TencentImPublisher::AwaitStream(MessageFeed& feed, PublishItems& items,
                                             PublishAdmission& admission, size_t parallel,
                                             const StartPass& pass, PublishCompletion& completion,
                                             std::vector<TransferPool::Finished>& finished) {
  const bool can_start_now = !admission.empty() && pool_->active() < parallel && !pass.held;
  if (!can_start_now) {
    const milliseconds wait = pool_->active() > 0 ? std::min(pass.wait, feed.Pause()) : pass.wait;
    if (auto waited = pool_->Wait(std::max(wait, milliseconds(0))); !waited) {
      return waited;
    }
  }
  if (pool_->active() == 0) {
    return {};
  }
  return PerformAndComplete(items, completion, finished);
}

}  // namespace room_outbox::core::im
