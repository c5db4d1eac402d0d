#include "hook_impl.h"

#include <unistd.h>

#include <array>
#include <string>
#include <utility>
#include <vector>

#include "claim_token.h"
#include "envelope_codec.h"

namespace room_outbox::internal {
namespace {

constexpr std::chrono::milliseconds kDefaultSyncTimeout{500};
constexpr int64_t kSyncLeaseMarginMs = 2000;

std::string HostName() {
  std::array<char, 256> name{};
  if (gethostname(name.data(), name.size() - 1) != 0 || name[0] == '\0') {
    return "unknown-node";
  }
  return name.data();
}

Status ValidateCommand(const Command& command, const std::vector<Event>& events) {
  auto invalid = [](std::string what) {
    return Status(Error{ErrorCode::kInvalidArgument, std::move(what)});
  };
  if (command.command_id.empty()) {
    return invalid("command: command_id is empty");
  }
  if (command.room_id.empty()) {
    return invalid("command " + command.command_id + ": room_id is empty");
  }
  if (command.command_type.empty()) {
    return invalid("command " + command.command_id + ": command_type is empty");
  }
  for (size_t i = 0; i < events.size(); ++i) {
    if (events[i].event_id.empty()) {
      return invalid("command " + command.command_id + ": event " + std::to_string(i) +
                     " has an empty event_id");
    }
    if (events[i].event_type.empty()) {
      return invalid("event " + events[i].event_id + ": event_type is empty");
    }
  }
  return {};
}

class HookImpl final : public Hook {
 public:
  HookImpl(const HookOptions& options, std::unique_ptr<OutboxStore> store,
           std::unique_ptr<Publisher> publisher, std::unique_ptr<Clock> clock)
      : options_(options),
        store_(std::move(store)),
        publisher_(std::move(publisher)),
        clock_(std::move(clock)) {
    if (options_.sync_publish_timeout.count() <= 0) {
      options_.sync_publish_timeout = kDefaultSyncTimeout;
    }
    if (options_.node_id.empty()) {
      options_.node_id = HostName();
    }
  }

  CommitResult Commit(const Command& command, const std::vector<Event>& events,
                      const CallerStatements& caller_statements) override {
    CommitResult result;
    if (Status valid = ValidateCommand(command, events); !valid.ok()) {
      result.error = valid.error();
      return result;
    }
    const int64_t now = clock_->NowMs();

    std::vector<Envelope> envelopes;
    CommitRequest request;
    request.command = command;
    request.now_ms = now;
    request.token = NewClaimToken();
    request.lease_until_ms = now + SyncLeaseMs(options_.sync_publish_timeout, events.size());
    for (const Event& event : events) {
      Envelope envelope{event.event_id,     event.event_type, command.room_id,
                        event.room_seq,     command.command_id, command.request_id,
                        options_.node_id,   event.occurred_at_ms > 0 ? event.occurred_at_ms : now,
                        event.payload};
      auto json = EncodeEnvelope(envelope);
      if (!json) {
        result.error = json.error();
        return result;
      }
      request.rows.push_back(NewOutboxRow{event.event_id, event.event_type, command.room_id,
                                          command.command_id, command.request_id,
                                          std::move(*json)});
      envelopes.push_back(std::move(envelope));
    }

    auto write = store_->CommitCommand(request, caller_statements);
    if (!write) {
      result.error = write.error();
      Log(LogLevel::kError, "commit failed: command_id=" + command.command_id +
                                " room_id=" + command.room_id + " error=" + write.error().message);
      return result;
    }
    if (write->duplicate) {
      result.status = CommitStatus::kDuplicate;
      Log(LogLevel::kInfo, "duplicate command ignored: command_id=" + command.command_id);
      return result;
    }
    result.status = CommitStatus::kCommitted;
    for (const Event& event : events) {
      result.events.push_back(EventDelivery{event.event_id, DeliveryState::kPending, ""});
    }
    if (write->row_ids.size() != envelopes.size()) {
      // The store broke its contract; leave every row to the relay (the lease ends soon).
      for (auto& delivery : result.events) {
        delivery.error = "sync publish skipped: store returned no row ids";
      }
      return result;
    }
    SyncPublish(command, envelopes, write->row_ids, request.token, result);
    return result;
  }

 private:
  // Publishes the committed events in order. The first failure stops the sync attempt: later
  // events of the room must not overtake it, so they go to the relay with it.
  void SyncPublish(const Command& command, const std::vector<Envelope>& envelopes,
                   const std::vector<int64_t>& row_ids, const std::string& token,
                   CommitResult& result) {
    std::vector<int64_t> delivered;
    std::vector<int64_t> left;
    std::string held_reason;
    if (options_.per_room_order && !row_ids.empty()) {
      auto earlier = store_->HasEarlierPending(command.room_id, row_ids.front());
      if (!earlier) {
        held_reason = "sync publish skipped: cannot check room order: " + earlier.error().message;
      } else if (*earlier) {
        held_reason = "sync publish skipped: an earlier event of the room is still pending";
      }
    }
    for (size_t i = 0; i < envelopes.size(); ++i) {
      EventDelivery& delivery = result.events[i];
      if (!held_reason.empty()) {
        delivery.error = held_reason;
        left.push_back(row_ids[i]);
        continue;
      }
      PublishOutcome outcome = publisher_->Publish(envelopes[i], options_.sync_publish_timeout);
      if (outcome.delivered()) {
        delivery.state = outcome.status == PublishStatus::kSkipped ? DeliveryState::kSkipped
                                                                   : DeliveryState::kPublished;
        delivered.push_back(row_ids[i]);
        continue;
      }
      delivery.error = outcome.error;
      held_reason = "sync publish skipped: an earlier event of this command failed";
      left.push_back(row_ids[i]);
      Log(LogLevel::kWarn, "sync publish failed, left pending for the relay: event_id=" +
                               envelopes[i].event_id + " room_id=" + command.room_id +
                               " status=" + PublishStatusName(outcome.status) +
                               " error=" + outcome.error);
    }
    if (!delivered.empty()) {
      // Best effort: a failed mark only means the relay may send these again later.
      auto marked = store_->MarkPublished(token, delivered);
      if (!marked) {
        Log(LogLevel::kWarn, "mark published after sync publish failed (may be sent again): " +
                                 marked.error().message);
      }
    }
    if (!left.empty()) {
      // Hand the rows to the relay at once instead of waiting for the sync lease to end.
      auto released = store_->Release(token, left);
      if (!released) {
        Log(LogLevel::kWarn, "release after sync publish failed (due when the lease ends): " +
                                 released.error().message);
      }
    }
  }

  void Log(LogLevel level, const std::string& line) const {
    if (options_.log) {
      options_.log(level, line);
    }
  }

  HookOptions options_;
  std::unique_ptr<OutboxStore> store_;
  std::unique_ptr<Publisher> publisher_;
  std::unique_ptr<Clock> clock_;
};

}  // namespace

int64_t SyncLeaseMs(std::chrono::milliseconds sync_timeout, size_t events) {
  return sync_timeout.count() * static_cast<int64_t>(events) + kSyncLeaseMarginMs;
}

std::unique_ptr<Hook> MakeHook(const HookOptions& options, std::unique_ptr<OutboxStore> store,
                               std::unique_ptr<Publisher> publisher,
                               std::unique_ptr<Clock> clock) {
  return std::make_unique<HookImpl>(options, std::move(store), std::move(publisher),
                                    std::move(clock));
}

}  // namespace room_outbox::internal
