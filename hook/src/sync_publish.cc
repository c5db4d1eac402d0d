#include "sync_publish.h"

#include <algorithm>
#include <string>

namespace room_outbox::internal {

SyncRows InlineSyncPublish::Publish(const std::vector<Envelope>& envelopes,
                                    const std::vector<NewOutboxRow>& rows_written,
                                    const std::vector<SyncItem>& items, int64_t deadline_ms,
                                    bool earlier_pending, bool probe,
                                    std::vector<EventDelivery>& deliveries) {
  SyncRows rows;
  bool first = true;  // the command's first publish had (nearly) the whole sync_publish_timeout
  std::string held_reason = earlier_pending ? kEarlierPending : "";
  SyncSkip held = SyncSkip::kRoomOrder;
  for (const SyncItem& item : items) {
    EventDelivery& delivery = deliveries[item.index];
    const std::chrono::milliseconds remaining(deadline_ms - clock_.SteadyMs());
    if (held_reason.empty() && remaining.count() <= 0) {
      held_reason = "sync publish skipped: the sync lease ran out";
      held = SyncSkip::kOutOfTime;
    }
    if (!held_reason.empty()) {
      delivery.error = held_reason;
      rows.left.push_back(item.row_id);
      if (counters_ != nullptr) counters_->AddSyncSkipped(held, 1);
      continue;
    }
    const Envelope& envelope = envelopes[item.index];
    const std::chrono::milliseconds call_timeout = std::min(sync_publish_timeout_, remaining);
    core::PublishOutcome outcome = publisher_.Publish(
        core::PublishMessage{item.row_id, 0, envelope, rows_written[item.index].envelope, {}, {}},
        call_timeout);
    NoteSyncOutcome(breaker_, outcome, !first && call_timeout < sync_publish_timeout_,
                    probe && !rows.probe_recorded, clock_.SteadyMs(), log_);
    if (counters_ != nullptr) counters_->AddSyncPublish(outcome);
    first = false;
    rows.probe_recorded = probe;
    if (outcome.delivered()) {
      delivery.state = outcome.status == core::PublishStatus::kSkipped ? DeliveryState::kSkipped
                                                                       : DeliveryState::kPublished;
      rows.delivered.push_back(item.row_id);
      continue;
    }
    delivery.error = outcome.error;
    held_reason = "sync publish skipped: an earlier event of this command failed";
    held = SyncSkip::kCommandFailed;
    rows.left.push_back(item.row_id);
    Log(LogLevel::kWarn,
        "sync publish failed, left pending for the relay: event_id=" + envelope.event_id +
            " room_id=" + envelope.room_id + " status=" + core::PublishStatusName(outcome.status) +
            " error=" + outcome.error);
  }
  return rows;
}

void InlineSyncPublish::Log(LogLevel level, const std::string& line) const {
  if (log_) {
    log_(level, line);
  }
}

}  // namespace room_outbox::internal
