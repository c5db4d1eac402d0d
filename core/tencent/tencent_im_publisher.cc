#include "core/tencent/tencent_im_publisher.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <mutex>
#include <random>
#include <string>
#include <unordered_set>
#include <vector>

#include "core/envelope_codec.h"
#include "core/json_writer.h"
#include "core/tencent/im_breaker.h"
#include "core/tencent/im_request.h"
#include "core/tencent/process_rate_budget.h"
#include "core/tencent/publish_admission.h"
#include "core/tencent/publish_completion.h"
#include "core/tencent/publish_item.h"
#include "core/tencent/transfer_pool.h"
#include "core/tencent/usersig.h"
#include "core/wipe.h"

namespace room_outbox::core {
namespace {

using std::chrono::milliseconds;

// Longest single wait in the transfer loop, so new work is picked up promptly.
constexpr milliseconds kMaxPollWait{100};
constexpr milliseconds kDefaultTimeout{3000};

const char kEndpointKey[] = "tencent_im.endpoint";

// Lets skip_ be searched with a string_view, without making a std::string of it.
struct TransparentHash {
  using is_transparent = void;
  size_t operator()(std::string_view text) const { return std::hash<std::string_view>{}(text); }
};

// What one pass of starting transfers leaves to the loop: how long it may wait, and whether
// the queue is held (by the budget or by the call's own probe), so that only an answer or that
// wait can let the next message out.
struct StartPass {
  milliseconds wait = kMaxPollWait;
  bool held = false;
};

class TencentImPublisher final : public Publisher {
 public:
  // `clock` is `own_clock` when that is set; otherwise it must outlive the publisher.
  TencentImPublisher(const TencentImOptions& options, ParsedImEndpoint endpoint, Clock& clock,
                     std::unique_ptr<Clock> own_clock, std::unique_ptr<TransferPool> pool)
      : options_(options),
        endpoint_(std::move(endpoint)),
        skip_(options.skip_event_types.begin(), options.skip_event_types.end()),
        own_clock_(std::move(own_clock)),
        clock_(clock),
        sig_cache_(NewSigCache()),
        breaker_(BreakerSettings{.cooldown = options.breaker_cooldown}),
        pool_(std::move(pool)),
        target_(options.sdk_app_id, options.admin_identifier),
        url_random_(SeedFromDevice(clock_)),
        credentials_(CheckImCredentials(options)) {
    if (options.requests_per_second > 0) {
      budget_ = ProcessRateBudget(endpoint_.base, options.sdk_app_id, options.requests_per_second);
    }
  }

  PublishOutcome Publish(const PublishMessage& message, milliseconds timeout) override {
    std::vector<PublishOutcome> outcomes =
        PublishMany(std::span<const PublishMessage>(&message, 1), timeout, 1);
    return std::move(outcomes.front());
  }

  bool breaker_open() const override { return breaker_.is_open(); }

  void ReloadSecretKey(std::string secret_key) override {
    // Waits for a call in progress (each is bounded by its timeout); the next one signs anew.
    std::lock_guard<std::timed_mutex> lock(mu_);
    ReplaceSecret(options_.secret_key, std::move(secret_key));
    sig_cache_ = NewSigCache();
    credentials_ = CheckImCredentials(options_);
  }

  bool Sends(std::string_view event_type) const override {
    return skip_.find(event_type) == skip_.end();
  }

  std::vector<PublishOutcome> PublishMany(std::span<const PublishMessage> messages,
                                          milliseconds timeout, size_t max_in_flight) override;

  void PublishStream(MessageFeed& feed, milliseconds timeout, size_t max_in_flight) override;

 private:
  static uint32_t SeedFromDevice(Clock& clock) {
    try {
      return std::random_device{}();
    } catch (...) {
      return static_cast<uint32_t>(clock.SteadyMs());
    }
  }

  UserSigCache NewSigCache() {
    return UserSigCache(options_.sdk_app_id, options_.admin_identifier, options_.secret_key,
                        options_.usersig_ttl, [this] { return clock_.NowMs() / 1000; });
  }

  Status WriteMessageBody(JsonWriter& body, JsonWriter& scratch,
                          const PublishMessage& message) const;
  PublishItem PrepareItem(const PublishMessage& message, bool breaker_rejects, JsonWriter& body,
                          JsonWriter& scratch) const;
  PublishItems Prepare(std::span<const PublishMessage> messages, int64_t now_ms);
  std::string Ready(std::unique_lock<std::timed_mutex>& lock, milliseconds timeout,
                    size_t& parallel);
  void Run(PublishItems& items, PublishAdmission& admission, size_t parallel);
  StartPass StartAdmitted(PublishItems& items, PublishAdmission& admission, size_t parallel,
                          int64_t now_ms);
  // The stream's steps (PublishStream), under the lock.
  void RunStream(MessageFeed& feed, PublishItems& items, PublishAdmission& admission,
                 size_t parallel);
  void Pull(MessageFeed& feed, PublishItems& items, PublishAdmission& admission, size_t parallel,
            JsonWriter& body, JsonWriter& scratch);
  // Hands the outcomes of items done since the last call to the feed; how many.
  size_t Report(MessageFeed& feed, PublishItems& items, size_t& first_unreported);
  Result<void> AwaitStream(MessageFeed& feed, PublishItems& items, PublishAdmission& admission,
                           size_t parallel, const StartPass& pass, PublishCompletion& completion,
                           std::vector<TransferPool::Finished>& finished);
  Result<void> PerformAndComplete(PublishItems& items, PublishCompletion& completion,
                                  std::vector<TransferPool::Finished>& finished);
  Result<void> StartTransfer(size_t index, const PublishItem& item, int64_t now_ms);
  void Abandon(PublishAdmission& admission, const Error& why);

  SecretOwner<TencentImOptions> options_;  // the key wiped with the publisher
  ParsedImEndpoint endpoint_;
  std::unordered_set<std::string, TransparentHash, std::equal_to<>> skip_;
  std::unique_ptr<Clock> own_clock_;  // null when the clock was given
  Clock& clock_;
  UserSigCache sig_cache_;  // guarded by mu_ once calls run
  ImBreaker breaker_;
  std::shared_ptr<SharedRateBudget> budget_;  // null when requests_per_second is 0
  std::timed_mutex mu_;
  std::unique_ptr<TransferPool> pool_;  // guarded by mu_
  SendGroupMsgTarget target_;           // guarded by mu_
  std::mt19937 url_random_;             // guarded by mu_
  Status credentials_;                  // CheckImCredentials of options_; guarded by mu_
};

std::vector<PublishOutcome> TencentImPublisher::PublishMany(
    std::span<const PublishMessage> messages, milliseconds timeout, size_t max_in_flight) {
  const int64_t call_start_ms = clock_.SteadyMs();
  if (timeout <= milliseconds::zero()) {
    timeout = kDefaultTimeout;
  }
  PublishItems items = Prepare(messages, call_start_ms);
  const bool any_to_send =
      std::any_of(items.begin(), items.end(), [](const PublishItem& i) { return !i.done; });
  std::unique_lock<std::timed_mutex> lock(mu_, std::defer_lock);
  size_t parallel = std::clamp<size_t>(max_in_flight, 1, kImPublisherPoolSize);
  const std::string why_not = any_to_send ? Ready(lock, timeout, parallel) : "";
  PublishAdmission admission(items, breaker_, budget_.get(), timeout, parallel, call_start_ms);
  for (size_t i = 0; i < items.size(); ++i) {
    if (!items[i].done) {
      admission.Enqueue(i);
    }
  }
  if (!why_not.empty()) {
    admission.FailRemaining(why_not, clock_.SteadyMs());
  } else if (any_to_send) {
    Run(items, admission, parallel);  // under the lock
  }

  const int64_t end_ms = clock_.SteadyMs();
  std::vector<PublishOutcome> out;
  out.reserve(items.size());
  for (PublishItem& item : items) {
    if (item.outcome.attempted()) {
      item.outcome.latency = milliseconds(end_ms - (item.started ? item.start_ms : call_start_ms));
    }
    out.push_back(std::move(item.outcome));
  }
  return out;
}

// One event: the single form. A pack: the RoomEventBatch form, each event's text taken from the
// row (or encoded once here), MsgPriority the highest of its events'.
Status TencentImPublisher::WriteMessageBody(JsonWriter& body, JsonWriter& scratch,
                                            const PublishMessage& message) const {
  MsgPriority priority =
      message.priority.value_or(PriorityForType(options_, message.envelope.event_type));
  if (message.rest.empty()) {
    return WriteSendGroupMsgBody(body, scratch, message.envelope, message.envelope_json,
                                 options_.group_id_prefix,
                                 RandomForRow(message.row_id, message.drop_generation), priority);
  }
  std::vector<std::string> encoded;  // the texts encoded here; the views below point into it
  encoded.reserve(message.events());
  std::vector<std::string_view> batch;
  batch.reserve(message.events());
  auto add = [&](const Envelope& envelope, std::string_view json) -> Status {
    if (json.empty()) {
      if (Status s = WriteEnvelope(scratch, FieldsOf(envelope)); !s.ok()) return s;
      json = encoded.emplace_back(scratch.text());
    }
    batch.push_back(json);
    return {};
  };
  if (Status s = add(message.envelope, message.envelope_json); !s.ok()) return s;
  for (const PackedEvent& event : message.rest) {
    if (Status s = add(*event.envelope, event.envelope_json); !s.ok()) return s;
    if (!message.priority) {
      priority = HigherPriority(priority, PriorityForType(options_, event.envelope->event_type));
    }
  }
  return WriteSendGroupMsgBody(
      body,
      SendGroupMsgParts{{},
                        message.envelope.room_id,
                        {},
                        message.envelope.event_id,
                        options_.group_id_prefix,
                        RandomForPack(message.row_id, message.drop_generation, message.events()),
                        priority,
                        batch});
}

// Skipped types, everything while the breaker is open, and bodies that cannot be built are done
// here, without the lock or a request.
PublishItem TencentImPublisher::PrepareItem(const PublishMessage& message, bool breaker_rejects,
                                            JsonWriter& body, JsonWriter& scratch) const {
  PublishItem item;
  if (skip_.count(message.envelope.event_type) != 0) {
    item.outcome.status = PublishStatus::kSkipped;
    item.outcome.scope = FailureScope::kNone;
    item.done = true;
  } else if (breaker_rejects) {
    item.outcome = NotAttemptedOutcome();
    item.done = true;
  } else if (Status built = WriteMessageBody(body, scratch, message); !built.ok()) {
    item.outcome.status = PublishStatus::kPermanent;
    item.outcome.scope = FailureScope::kUndeliverableRow;
    item.outcome.error = "cannot build IM request: " + built.error().message;
    item.done = true;
  } else {
    item.body = body.text();
  }
  return item;
}

PublishItems TencentImPublisher::Prepare(std::span<const PublishMessage> messages, int64_t now_ms) {
  const bool breaker_rejects = breaker_.RejectsAt(now_ms);
  PublishItems items;
  // Per call, not per message: Prepare runs outside the lock.
  JsonWriter body;
  JsonWriter scratch;
  for (const PublishMessage& message : messages) {
    items.push_back(PrepareItem(message, breaker_rejects, body, scratch));
  }
  return items;
}

// Takes the publisher's lock and grows the pool for the call: an empty string when requests can
// be made (`parallel` then fits the pool), else why not.
std::string TencentImPublisher::Ready(std::unique_lock<std::timed_mutex>& lock,
                                      milliseconds timeout, size_t& parallel) {
  if (!lock.try_lock_for(timeout)) {
    return "publisher busy: another call held it for " + std::to_string(timeout.count()) + "ms";
  }
  if (auto reserved = pool_->Reserve(parallel); !reserved) {
    if (pool_->size() == 0) {
      return reserved.error().message;
    }
    parallel = std::min(parallel, pool_->size());
  }
  return "";
}

void TencentImPublisher::Run(PublishItems& items, PublishAdmission& admission, size_t parallel) {
  PublishCompletion completion(items, admission, breaker_, budget_.get(), sig_cache_);
  std::vector<TransferPool::Finished> finished;
  while (!admission.empty() || pool_->active() > 0) {
    const StartPass pass = StartAdmitted(items, admission, parallel, clock_.SteadyMs());
    if (pool_->active() == 0) {
      if (admission.empty()) {
        break;
      }
      // Waiting for the budget only: with no transfers, the wait just sleeps.
      if (auto waited = pool_->Wait(pass.wait); !waited) {
        Abandon(admission, waited.error());
        break;
      }
      continue;
    }
    auto performed = PerformAndComplete(items, completion, finished);
    if (!performed) {
      Abandon(admission, performed.error());
      break;
    }
    // Loop straight back when finished transfers freed slots for queued work (e.g. a 70001
    // resend); otherwise wait for socket activity, a curl timer or the budget's tokens.
    const bool can_start_now = !admission.empty() && pool_->active() < parallel && !pass.held;
    if (pool_->active() > 0 && !can_start_now) {
      if (auto waited = pool_->Wait(pass.wait); !waited) {
        Abandon(admission, waited.error());
        break;
      }
    }
  }
}

// Starts what admission lets out while slots are free.
StartPass TencentImPublisher::StartAdmitted(PublishItems& items, PublishAdmission& admission,
                                            size_t parallel, int64_t now_ms) {
  StartPass pass;
  while (pool_->active() < parallel) {
    const PublishAdmission::Decision decision = admission.Next(now_ms, parallel - pool_->active());
    switch (decision.kind) {
      case PublishAdmission::Kind::kEmpty:
        return pass;
      case PublishAdmission::Kind::kKeptBack:
        continue;
      case PublishAdmission::Kind::kWaitForBudget:
        pass.wait = std::min(pass.wait, decision.wait);
        pass.held = true;
        return pass;
      case PublishAdmission::Kind::kWaitForProbe:
        pass.held = true;
        return pass;
      case PublishAdmission::Kind::kSend:
        break;
    }
    PublishItem& item = items[decision.index];
    if (auto started = StartTransfer(decision.index, item, now_ms); !started) {
      item.outcome.status = started.error().code == ErrorCode::kInvalidArgument
                                ? PublishStatus::kPermanent
                                : PublishStatus::kRetryable;
      item.outcome.error = started.error().message;
      item.done = true;
      admission.ReleaseProbe(item, now_ms);
      continue;
    }
    admission.Sent(decision.index);
  }
  return pass;
}

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

// Drives the transfers and completes each one that finished; libcurl's error, after the finished
// ones were completed, when the multi handle failed.
Result<void> TencentImPublisher::PerformAndComplete(PublishItems& items,
                                                    PublishCompletion& completion,
                                                    std::vector<TransferPool::Finished>& finished) {
  finished.clear();
  auto performed = pool_->Perform(finished);
  for (const TransferPool::Finished& done : finished) {
    const PublishItem& item = items[done.tag];
    const milliseconds item_timeout(item.deadline_ms - item.start_ms);
    completion.Complete(done.tag, TransferOutcome(done, item_timeout, endpoint_.target),
                        clock_.SteadyMs());
  }
  return performed;
}

Result<void> TencentImPublisher::StartTransfer(size_t index, const PublishItem& item,
                                               int64_t now_ms) {
  if (!credentials_.ok()) {
    return Fail(credentials_.error());  // built with ImCredentials::kNotUsed: signs nothing
  }
  auto sig = sig_cache_.Get();
  if (!sig) {
    return Fail(sig.error());
  }
  std::uniform_int_distribution<uint32_t> any_uint32;
  const std::string& target = target_.For(*sig, any_uint32(url_random_));
  // The body stays in `item` until the transfer has left the pool.
  return pool_->Start(index, target, item.body, milliseconds(item.deadline_ms - now_ms));
}

// libcurl failed as a whole: every transfer in flight is dropped and what is not done fails.
void TencentImPublisher::Abandon(PublishAdmission& admission, const Error& why) {
  pool_->AbortAll();
  admission.FailRemaining(why.message, clock_.SteadyMs());
}

}  // namespace

Status CheckImCredentials(const TencentImOptions& options) {
  if (options.sdk_app_id == 0) {
    return Error{ErrorCode::kInvalidArgument, "tencent_im.sdk_app_id must be set (non-zero)"};
  }
  if (options.admin_identifier.empty()) {
    return Error{ErrorCode::kInvalidArgument, "tencent_im.admin_identifier must not be empty"};
  }
  if (options.secret_key.empty()) {
    return Error{ErrorCode::kInvalidArgument, "tencent_im.secret_key must not be empty"};
  }
  return Status();
}

namespace {

// The checks of MakeTencentImPublisher but the credentials', each naming its key.
Result<void> CheckOptions(const TencentImOptions& options) {
  if (!std::isfinite(options.requests_per_second) || options.requests_per_second < 0) {
    return Fail(ErrorCode::kInvalidArgument,
                "tencent_im.requests_per_second must be a finite number >= 0");
  }
  if (!std::isfinite(options.app_requests_per_second) || options.app_requests_per_second < 0) {
    return Fail(ErrorCode::kInvalidArgument,
                "tencent_im.app_requests_per_second must be a finite number >= 0");
  }
  if (auto proxy = CheckImProxy(options.proxy); !proxy) {
    return Fail(proxy.error().code, "tencent_im.proxy: " + proxy.error().message);
  }
  if (options.priority_by_type.count("") != 0) {
    return Fail(ErrorCode::kInvalidArgument,
                "tencent_im.priority_by_type: an event type must not be empty");
  }
  return {};
}

// `clock` null: the publisher runs on `own_clock`.
Result<std::unique_ptr<Publisher>> MakePublisher(const TencentImOptions& options, Clock* clock,
                                                 std::unique_ptr<Clock> own_clock,
                                                 ImCredentials credentials) {
  auto endpoint = ParseImEndpoint(options.endpoint);
  if (!endpoint) {
    return Fail(ErrorCode::kInvalidArgument,
                std::string(kEndpointKey) + ": " + endpoint.error().message);
  }
  Status has_credentials = CheckImCredentials(options);
  if (credentials == ImCredentials::kRequired && !has_credentials.ok()) {
    return Fail(has_credentials.error());
  }
  if (auto checked = CheckOptions(options); !checked) {
    return Fail(checked.error());
  }
  auto pool = TransferPool::Make(kImPublisherPoolSize,
                                 std::string(endpoint->base) + std::string(kSendGroupMsgPath),
                                 options.ca_file, options.proxy);
  if (!pool) {
    return Fail(pool.error());
  }
  Clock& chosen = clock != nullptr ? *clock : *own_clock;
  return std::unique_ptr<Publisher>(std::make_unique<TencentImPublisher>(
      options, std::move(*endpoint), chosen, std::move(own_clock), std::move(*pool)));
}

}  // namespace

Result<std::unique_ptr<Publisher>> MakeTencentImPublisher(const TencentImOptions& options,
                                                          Clock& clock, ImCredentials credentials) {
  return MakePublisher(options, &clock, nullptr, credentials);
}

Result<std::unique_ptr<Publisher>> MakeTencentImPublisher(const TencentImOptions& options) {
  return MakePublisher(options, nullptr, std::make_unique<SystemClock>(), ImCredentials::kRequired);
}

}  // namespace room_outbox::core
