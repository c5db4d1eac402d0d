// TencentImPublisher (im_publisher.h): a batch of messages (PublishMany), and the steps the batch
// and the stream share: the message bodies, the call's readiness, admission, the transfers.
#include "core/tencent/im_publisher.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "core/envelope_codec.h"

namespace room_outbox::core::im {

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

}  // namespace room_outbox::core::im
