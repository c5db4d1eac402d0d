#include "sync_publish.h"

#include <algorithm>
#include <string>

namespace room_outbox::internal {

std::vector<std::pair<size_t, size_t>> InlineSyncPublish::Messages(
    const std::vector<Envelope>& envelopes, const std::vector<NewOutboxRow>& rows,
    const std::vector<SyncItem>& items) const {
  std::vector<PackCandidate> candidates;
  candidates.reserve(items.size());
  for (const SyncItem& item : items) {
    candidates.push_back(PackCandidate{rows[item.index].event_id, rows[item.index].envelope});
  }
  // Both branches views: a "" branch would make the common type std::string, a temporary.
  const std::string_view room =
      items.empty() ? std::string_view() : std::string_view(envelopes[items.front().index].room_id);
  std::vector<std::pair<size_t, size_t>> messages;
  size_t at = 0;
  for (size_t events : SplitIntoPacks(candidates, room, packs_)) {
    messages.emplace_back(at, at + events);
    at += events;
  }
  return messages;
}

core::PublishMessage InlineSyncPublish::MessageOf(const std::vector<Envelope>& envelopes,
                                                  const std::vector<NewOutboxRow>& rows_written,
                                                  const std::vector<SyncItem>& items, size_t begin,
                                                  size_t end) {
  const SyncItem& head = items[begin];
  core::PublishMessage message{
      head.row_id, 0, envelopes[head.index], rows_written[head.index].envelope, {}, {}};
  for (size_t i = begin + 1; i < end; ++i) {
    message.rest.push_back(
        core::PackedEvent{&envelopes[items[i].index], rows_written[items[i].index].envelope});
  }
  return message;
}

// One answer for every row of items[begin, end): delivered (true), or left to the relay with the
// error, a pack IM did not definitely drop recorded for its hand-back.
bool InlineSyncPublish::Settle(const core::PublishOutcome& outcome,
                               const std::vector<SyncItem>& items, size_t begin, size_t end,
                               std::vector<EventDelivery>& deliveries, SyncRows& rows) {
  if (outcome.delivered()) {
    for (size_t i = begin; i < end; ++i) {
      deliveries[items[i].index].state = outcome.status == core::PublishStatus::kSkipped
                                             ? DeliveryState::kSkipped
                                             : DeliveryState::kPublished;
      rows.delivered.push_back(items[i].row_id);
    }
    return true;
  }
  for (size_t i = begin; i < end; ++i) {
    deliveries[items[i].index].error = outcome.error;
    rows.left.push_back(items[i].row_id);
  }
  if (end - begin > 1 && !outcome.definite_drop) {
    rows.failed_pack = FailedPack{items[begin].row_id, end - begin};
  }
  return false;
}

SyncRows InlineSyncPublish::Publish(const std::vector<Envelope>& envelopes,
                                    const std::vector<NewOutboxRow>& rows_written,
                                    const std::vector<SyncItem>& items, int64_t deadline_ms,
                                    bool earlier_pending, bool probe,
                                    std::vector<EventDelivery>& deliveries) {
  SyncRows rows;
  bool first = true;  // the command's first publish had (nearly) the whole sync_publish_timeout
  std::string held_reason = earlier_pending ? kEarlierPending : "";
  SyncSkip held = SyncSkip::kRoomOrder;
  for (const auto& [begin, end] : Messages(envelopes, rows_written, items)) {
    const std::chrono::milliseconds remaining(deadline_ms - clock_.SteadyMs());
    if (held_reason.empty() && remaining.count() <= 0) {
      held_reason = "sync publish skipped: the sync lease ran out";
      held = SyncSkip::kOutOfTime;
    }
    if (!held_reason.empty()) {
      for (size_t i = begin; i < end; ++i) {
        deliveries[items[i].index].error = held_reason;
        rows.left.push_back(items[i].row_id);
      }
      if (counters_ != nullptr) counters_->AddSyncSkipped(held, end - begin);
      continue;
    }
    const Envelope& envelope = envelopes[items[begin].index];
    const core::PublishMessage message = MessageOf(envelopes, rows_written, items, begin, end);
    const std::chrono::milliseconds call_timeout = std::min(sync_publish_timeout_, remaining);
    core::PublishOutcome outcome = publisher_.Publish(message, call_timeout);
    NoteSyncOutcome(breaker_, outcome, !first && call_timeout < sync_publish_timeout_,
                    probe && !rows.probe_recorded, clock_.SteadyMs(), log_);
    if (room_backoff_ != nullptr) {
      NoteRoomOutcome(*room_backoff_, envelope.room_id, outcome, log_);
    }
    if (counters_ != nullptr) counters_->AddSyncPublish(outcome, end - begin);
    first = false;
    rows.probe_recorded = probe;
    if (Settle(outcome, items, begin, end, deliveries, rows)) continue;
    held_reason = "sync publish skipped: an earlier event of this command failed";
    held = SyncSkip::kCommandFailed;
    Log(LogLevel::kWarn,
        "sync publish failed, left pending for the relay: event_id=" + envelope.event_id +
            " room_id=" + envelope.room_id +
            (end - begin > 1 ? " events=" + std::to_string(end - begin) : "") +
            " status=" + core::PublishStatusName(outcome.status) + " error=" + outcome.error);
  }
  return rows;
}

void InlineSyncPublish::Log(LogLevel level, const std::string& line) const {
  if (log_) {
    log_(level, line);
  }
}

}  // namespace room_outbox::internal
