#include "hook_impl.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "commit_checks.h"
#include "core/claim_token.h"
#include "core/envelope_codec.h"
#include "core/host_name.h"
#include "core/tencent/im_request.h"
#include "sync_hand_back.h"

namespace room_outbox::internal {
namespace {

constexpr int64_t kSyncLeaseMarginMs = 2000;

constexpr const char* kBreakerSkipped = "sync publish skipped: IM failing, breaker open";
constexpr const char* kSyncOff = "sync publish off: left for the relay";
constexpr const char* kQueueFull = "background publish queue full: left for the relay";
constexpr const char* kEarlierPending =
    "sync publish skipped: an earlier event of the room is still pending";

// Connection-class failures before COMMIT was sent: the server rolled the transaction back,
// so running the command again on a new connection cannot write it twice. A deadlock victim is
// rolled back too.
bool RolledBackRetryable(const Error& error) {
  return error.code == ErrorCode::kUnavailable || error.code == ErrorCode::kAborted;
}

// How a commit's pending rows are handled after COMMIT.
enum class SyncMode {
  kPublish,         // the sync publish runs (breaker closed)
  kProbe,           // it runs as the sync breaker's probe
  kBreakerSkipped,  // the breaker is open: the rows are written due at once for the relay
  kOff,             // HookOptions::sync_publish is kOff: the same
  kQueueFull,       // kBackground and its queue is full: the same
};

// What Commit writes and what it publishes afterwards, built before BEGIN.
struct PreparedCommit {
  CommitRequest request;
  std::vector<Envelope> envelopes;  // one per event
  SyncMode mode = SyncMode::kPublish;
  // kPublish / kProbe by the background publisher: a queue slot is reserved (QueueSlot) and
  // `room` is what the queue held of the room before the transaction.
  bool background = false;
  RoomView room;
};

// Gives a probe admission back unless its sync publish recorded a verdict.
class ProbeGuard {
 public:
  ProbeGuard(SyncBreaker& breaker, bool armed) : breaker_(breaker), armed_(armed) {}
  ~ProbeGuard() {
    if (armed_) breaker_.CancelProbe();
  }
  ProbeGuard(const ProbeGuard&) = delete;
  ProbeGuard& operator=(const ProbeGuard&) = delete;
  void Disarm() { armed_ = false; }

 private:
  SyncBreaker& breaker_;
  bool armed_;
};

// Gives a reserved background queue slot back unless the command was offered.
class QueueSlot {
 public:
  QueueSlot(BackgroundPublisher* background, bool reserved)
      : background_(reserved ? background : nullptr) {}
  ~QueueSlot() {
    if (background_ != nullptr) background_->Unreserve();
  }
  QueueSlot(const QueueSlot&) = delete;
  QueueSlot& operator=(const QueueSlot&) = delete;
  void Taken() { background_ = nullptr; }

 private:
  BackgroundPublisher* background_;
};

// One pending row of the sync publish.
struct SyncItem {
  size_t index = 0;  // into the command's events
  int64_t row_id = 0;
};

class HookImpl final : public Hook {
 public:
  HookImpl(const HookOptions& options, std::unique_ptr<HookStore> store,
           std::unique_ptr<Publisher> publisher, std::unique_ptr<Clock> clock,
           std::shared_ptr<SyncBreaker> sync_breaker, BackgroundParts background)
      : options_(Normalized(options)),
        store_(std::move(store)),
        publisher_(std::move(publisher)),
        clock_(std::move(clock)),
        sync_breaker_(sync_breaker ? std::move(sync_breaker) : std::make_shared<SyncBreaker>()),
        wake_(options_.wake_socket) {
    if (options_.sync_publish == SyncPublishMode::kBackground && background.store &&
        background.publisher) {
      background_ = std::make_unique<BackgroundPublisher>(
          BackgroundPublisher::Options{options_.background_queue, options_.sync_publish_timeout,
                                       options_.log},
          std::move(background.store), std::move(background.publisher), sync_breaker_, *clock_,
          wake_);
    }
  }

  // The background publisher first: it finishes or hands back its rows, then joins.
  ~HookImpl() override { background_.reset(); }

  CommitResult Commit(const Command& command, const std::vector<Event>& events,
                      const CallerStatements& caller_statements) override {
    CommitResult result;
    if (Status valid = CheckCommand(command, events, options_.tencent_im.group_id_prefix,
                                    options_.tencent_im.skip_event_types);
        !valid.ok()) {
      result.error = valid.error();
      return result;
    }
    auto prepared = Prepare(command, events);
    if (!prepared) {
      result.error = prepared.error();
      return result;
    }
    ChooseSyncMode(*prepared);
    ProbeGuard probe(*sync_breaker_, prepared->mode == SyncMode::kProbe);
    QueueSlot slot(background_.get(), prepared->background);
    auto write = Write(prepared->request, caller_statements);
    if (!write) {
      result.error = write.error();
      Log(LogLevel::kError, "commit failed: command_id=" + command.command_id +
                                " room_id=" + command.room_id + " error=" + write.error().message);
      return result;
    }
    if (write->outcome == CommitOutcome::kDuplicate) {
      result.status = CommitStatus::kDuplicate;
      Log(LogLevel::kInfo, "duplicate command ignored: command_id=" + command.command_id);
      return result;
    }
    if (write->outcome == CommitOutcome::kCommitLost &&
        !ResolveLostCommit(command.command_id, *write, result)) {
      return result;
    }
    result.status = CommitStatus::kCommitted;
    Deliver(*prepared, *write, probe, slot, result);
    return result;
  }

 private:
  static HookOptions Normalized(HookOptions options) {
    if (options.sync_publish_timeout.count() <= 0) {
      options.sync_publish_timeout = kDefaultSyncPublishTimeout;
    }
    if (options.tencent_im.max_body_bytes == 0) {
      options.tencent_im.max_body_bytes = kDefaultMaxBodyBytes;
    }
    if (options.node_id.empty()) {
      options.node_id = HostName();
    }
    if (options.background_queue == 0) {
      options.background_queue = kDefaultBackgroundQueue;
    }
    return options;
  }

  Result<PreparedCommit> Prepare(const Command& command, const std::vector<Event>& events) {
    const int64_t now = clock_->NowMs();  // only for occurred_at_ms: information, not compared
    PreparedCommit prepared;
    CommitRequest& request = prepared.request;
    request.command = command;
    request.token = NewClaimToken();
    request.check_earlier_pending = options_.per_room_order;
    size_t pending = 0;
    for (const Event& event : events) {
      Envelope envelope{event.event_id,     event.event_type,
                        command.room_id,    event.room_seq,
                        command.command_id, command.request_id,
                        options_.node_id,   event.occurred_at_ms > 0 ? event.occurred_at_ms : now,
                        event.payload};
      auto json = EncodeEnvelope(envelope);
      if (!json) {
        return Fail(json.error());
      }
      const bool published = !publisher_->Sends(event.event_type);
      if (!published) {
        if (Status fits = CheckBodySize(envelope); !fits.ok()) {
          return Fail(fits.error());
        }
      }
      pending += published ? 0 : 1;
      request.rows.push_back(NewOutboxRow{event.event_id, event.event_type, command.room_id,
                                          command.command_id, command.request_id, std::move(*json),
                                          published});
      prepared.envelopes.push_back(std::move(envelope));
    }
    request.sync_lease =
        std::chrono::milliseconds(pending == 0 ? 0 : SyncLeaseMs(options_.sync_publish_timeout));
    return prepared;
  }

  // Tencent refuses a body over its limit (80002) forever: refuse it here, where the caller can
  // still do something about it. The body is built as the publisher builds it, with the widest
  // Random, so the row's real Random cannot make it longer.
  Status CheckBodySize(const Envelope& envelope) const {
    const TencentImOptions& im = options_.tencent_im;
    auto body = BuildSendGroupMsgBody(envelope, im.group_id_prefix, kWidestRandom,
                                      PriorityForType(im, envelope.event_type));
    if (!body) {
      return body.error();
    }
    if (body->size() > im.max_body_bytes) {
      return Error{ErrorCode::kInvalidArgument,
                   "event " + envelope.event_id + ": the IM request body would be " +
                       std::to_string(body->size()) + " bytes, over [tencent_im] max_body_bytes " +
                       std::to_string(im.max_body_bytes)};
    }
    return {};
  }

  // Whether this commit's pending rows get a sync publish, inline or in the background.
  // Skipped (off, the sync breaker open, the background queue full), they are written with no
  // lease: due for the relay at once, no Release needed.
  void ChooseSyncMode(PreparedCommit& prepared) {
    CommitRequest& request = prepared.request;
    if (request.sync_lease.count() == 0) {
      return;  // nothing pending
    }
    prepared.mode = AdmitSyncPublish();
    if (prepared.mode == SyncMode::kPublish || prepared.mode == SyncMode::kProbe) {
      if (options_.sync_publish != SyncPublishMode::kBackground) {
        return;
      }
      if (background_ && background_->Reserve()) {
        prepared.background = true;
        prepared.room = background_->View(request.command.room_id);
        return;
      }
      if (prepared.mode == SyncMode::kProbe) {
        sync_breaker_->CancelProbe();
      }
      prepared.mode = SyncMode::kQueueFull;
    }
    request.token.clear();
    request.sync_lease = std::chrono::milliseconds(0);
  }

  SyncMode AdmitSyncPublish() {
    if (options_.sync_publish == SyncPublishMode::kOff) {
      return SyncMode::kOff;
    }
    switch (sync_breaker_->Admit(clock_->SteadyMs())) {
      case SyncBreaker::Admission::kAllow:
        return SyncMode::kPublish;
      case SyncBreaker::Admission::kProbe:
        return SyncMode::kProbe;
      case SyncBreaker::Admission::kSkip:
        break;
    }
    return SyncMode::kBreakerSkipped;
  }

  // CommitCommand, run once more when the first try failed before COMMIT was sent with a
  // connection-class error (the store reconnects on its next call). Never more than twice.
  Result<CommitWrite> Write(const CommitRequest& request, const CallerStatements& statements) {
    auto write = store_->CommitCommand(request, statements);
    if (!write && RolledBackRetryable(write.error())) {
      Log(LogLevel::kInfo, "commit rolled back before COMMIT, trying once more: command_id=" +
                               request.command.command_id + " error=" + write.error().message);
      write = store_->CommitCommand(request, statements);
    }
    return write;
  }

  // COMMIT was sent and its answer lost: the command log tells whether it committed. True when
  // it did (write.row_ids then hold its rows as read back); otherwise fills result.
  bool ResolveLostCommit(const std::string& command_id, CommitWrite& write, CommitResult& result) {
    auto found = store_->FindCommand(command_id);
    if (!found && IsRetryable(found.error())) {
      found = store_->FindCommand(command_id);
    }
    if (!found) {
      result.status = CommitStatus::kUnknown;
      result.error = Error{
          write.commit_error.code,
          "commit outcome unknown (retry with the same command_id): " + write.commit_error.message +
              "; lookup failed: " + found.error().message};
      Log(LogLevel::kError,
          "commit outcome unknown: command_id=" + command_id + " error=" + result.error.message);
      return false;
    }
    if (!found->has_value()) {
      result.error = Error{write.commit_error.code,
                           "rolled back (not in room_command_log after a lost COMMIT answer): " +
                               write.commit_error.message};
      Log(LogLevel::kError,
          "commit failed: command_id=" + command_id + " error=" + result.error.message);
      return false;
    }
    Log(LogLevel::kWarn,
        "COMMIT answer lost, the command log has it: committed: command_id=" + command_id);
    write.row_ids = std::move((*found)->row_ids);
    return true;
  }

  // One EventDelivery per event, then the sync publish of the pending ones (inline, or handed
  // to the background publisher).
  void Deliver(const PreparedCommit& prepared, const CommitWrite& write, ProbeGuard& probe,
               QueueSlot& slot, CommitResult& result) {
    const auto& rows = prepared.request.rows;
    std::vector<SyncItem> items;
    for (size_t i = 0; i < rows.size(); ++i) {
      const bool skipped = rows[i].published;
      result.events.push_back(EventDelivery{
          rows[i].event_id, skipped ? DeliveryState::kSkipped : DeliveryState::kPending, ""});
      if (!skipped && write.row_ids.size() == rows.size()) {
        items.push_back(SyncItem{i, write.row_ids[i]});
      }
    }
    if (write.row_ids.size() != rows.size()) {
      // The store broke its contract; leave every row to the relay (the lease ends soon).
      for (auto& delivery : result.events) {
        if (delivery.state == DeliveryState::kPending) {
          delivery.error = "sync publish skipped: store returned no row ids";
        }
      }
      return;
    }
    if (items.empty()) {
      return;
    }
    if (const char* reason = SkippedReason(prepared.mode)) {
      for (const SyncItem& item : items) {
        result.events[item.index].error = reason;
      }
      wake_.Notify();
      return;  // written unleased: the relay has them already
    }
    // One deadline for the whole command: what does not fit goes to the relay.
    const auto deadline = write.lease_start + options_.sync_publish_timeout;
    if (prepared.background) {
      Enqueue(prepared, items, write, deadline, probe, slot, result);
      return;
    }
    SyncPublish(prepared, items, write, deadline, probe, result);
  }

  static const char* SkippedReason(SyncMode mode) {
    switch (mode) {
      case SyncMode::kOff:
        return kSyncOff;
      case SyncMode::kBreakerSkipped:
        return kBreakerSkipped;
      case SyncMode::kQueueFull:
        return kQueueFull;
      default:
        return nullptr;
    }
  }

  // Hands the command's rows to the background publisher (kQueued), or, when per-room order
  // refuses them there, releases them to the relay as the inline sync publish would.
  void Enqueue(const PreparedCommit& prepared, const std::vector<SyncItem>& items,
               const CommitWrite& write, std::chrono::steady_clock::time_point deadline,
               ProbeGuard& probe, QueueSlot& slot, CommitResult& result) {
    BackgroundJob job{prepared.request.token,
                      prepared.request.command.room_id,
                      deadline,
                      {},
                      prepared.mode == SyncMode::kProbe};
    std::vector<int64_t> ids;
    for (const SyncItem& item : items) {
      job.rows.push_back(BackgroundRow{item.row_id, prepared.envelopes[item.index]});
      ids.push_back(item.row_id);
    }
    slot.Taken();  // Offer takes the slot or gives it back
    if (background_->Offer(std::move(job), prepared.room, write.earlier_pending)) {
      probe.Disarm();  // the background publisher records or cancels the probe
      for (const SyncItem& item : items) {
        result.events[item.index].state = DeliveryState::kQueued;
      }
      return;
    }
    for (const SyncItem& item : items) {
      result.events[item.index].error = kEarlierPending;
    }
    HandBack(prepared.request.token, {}, ids);
    wake_.Notify();
  }

  // Publishes the pending events in order, each bounded by sync_publish_timeout and all by
  // `deadline` (which ends before their lease). The first failure stops the sync attempt: later
  // events of the room must not overtake it, so they go to the relay with it.
  void SyncPublish(const PreparedCommit& prepared, const std::vector<SyncItem>& items,
                   const CommitWrite& write, std::chrono::steady_clock::time_point deadline,
                   ProbeGuard& probe, CommitResult& result) {
    bool probing = prepared.mode == SyncMode::kProbe;
    bool first = true;  // the command's first publish had (nearly) the whole window
    std::vector<int64_t> delivered;
    std::vector<int64_t> left;
    std::string held_reason;
    if (write.earlier_pending) {
      held_reason = kEarlierPending;
    }
    for (const SyncItem& item : items) {
      EventDelivery& delivery = result.events[item.index];
      const auto remaining = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (held_reason.empty() && remaining.count() <= 0) {
        held_reason = "sync publish skipped: the sync lease ran out";
      }
      if (!held_reason.empty()) {
        delivery.error = held_reason;
        left.push_back(item.row_id);
        continue;
      }
      const Envelope& envelope = prepared.envelopes[item.index];
      const std::chrono::milliseconds timeout = std::min(options_.sync_publish_timeout, remaining);
      PublishOutcome outcome =
          publisher_->Publish(PublishMessage{item.row_id, 0, envelope, {}}, timeout);
      NoteSyncOutcome(*sync_breaker_, outcome, !first && timeout < options_.sync_publish_timeout,
                      probing, clock_->SteadyMs(), options_.log);
      first = false;
      if (probing) {
        probe.Disarm();
        probing = false;
      }
      if (outcome.delivered()) {
        delivery.state = outcome.status == PublishStatus::kSkipped ? DeliveryState::kSkipped
                                                                   : DeliveryState::kPublished;
        delivered.push_back(item.row_id);
        continue;
      }
      delivery.error = outcome.error;
      held_reason = "sync publish skipped: an earlier event of this command failed";
      left.push_back(item.row_id);
      Log(LogLevel::kWarn,
          "sync publish failed, left pending for the relay: event_id=" + envelope.event_id +
              " room_id=" + envelope.room_id + " status=" + PublishStatusName(outcome.status) +
              " error=" + outcome.error);
    }
    HandBack(prepared.request.token, delivered, left);
    if (!left.empty()) {
      wake_.Notify();
    }
  }

  void HandBack(const std::string& token, const std::vector<int64_t>& delivered,
                const std::vector<int64_t>& left) {
    HandBackSyncRows(*store_, token, delivered, left, "sync publish", options_.log);
  }

  static int64_t ElapsedMs(std::chrono::steady_clock::time_point since) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                 since)
        .count();
  }

  void Log(LogLevel level, const std::string& line) const {
    if (options_.log) {
      options_.log(level, line);
    }
  }

  HookOptions options_;
  std::unique_ptr<HookStore> store_;
  std::unique_ptr<Publisher> publisher_;
  std::unique_ptr<Clock> clock_;
  std::shared_ptr<SyncBreaker> sync_breaker_;
  WakeSender wake_;
  std::unique_ptr<BackgroundPublisher> background_;  // kBackground only
};

}  // namespace

int64_t SyncLeaseMs(std::chrono::milliseconds sync_timeout) {
  return sync_timeout.count() + kSyncLeaseMarginMs;
}

std::unique_ptr<Hook> MakeHook(const HookOptions& options, std::unique_ptr<HookStore> store,
                               std::unique_ptr<Publisher> publisher, std::unique_ptr<Clock> clock,
                               std::shared_ptr<SyncBreaker> sync_breaker,
                               BackgroundParts background) {
  return std::make_unique<HookImpl>(options, std::move(store), std::move(publisher),
                                    std::move(clock), std::move(sync_breaker),
                                    std::move(background));
}

}  // namespace room_outbox::internal
