#pragma once
// TencentImPublisher, the Publisher of tencent_im_publisher.h: its class, shared by the files that
// define it: im_publisher.cc (a batch of messages: PublishMany and the steps it shares with the
// stream), im_publisher_stream.cc (PublishStream). Made only by MakeTencentImPublisher.

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "core/json_writer.h"
#include "core/tencent/im_breaker.h"
#include "core/tencent/im_endpoint.h"
#include "core/tencent/im_request.h"
#include "core/tencent/process_rate_budget.h"
#include "core/tencent/publish_admission.h"
#include "core/tencent/publish_completion.h"
#include "core/tencent/publish_item.h"
#include "core/tencent/tencent_im_publisher.h"
#include "core/tencent/transfer_pool.h"
#include "core/tencent/usersig.h"
#include "core/wipe.h"

namespace room_outbox::core::im {

using std::chrono::milliseconds;

// Longest single wait in the transfer loop, so new work is picked up promptly.
constexpr milliseconds kMaxPollWait{100};
constexpr milliseconds kDefaultTimeout{3000};

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

}  // namespace room_outbox::core::im
