#include "worker/round_marks.h"

#include <algorithm>
#include <utility>

#include "store/attempt_history.h"

namespace room_outbox::relay {

RoundMarks::RoundMarks(const MarkDeps& deps, std::string token)
    : deps_(deps),
      writer_(deps.store, deps.metrics, deps.logger, std::string(deps.node_id), std::move(token),
              deps.held_rooms, deps.unwritten) {}

void RoundMarks::Undecodable(const UndecodableRow& bad) {
  AttemptVerdict verdict = deps_.retry.Undecodable(bad.why);
  ++undecodable_;
  deps_.metrics.AddPublishFailureByReason(FailureReason::kUndecodable);
  if (!decode_error_) {
    decode_error_ =
        Error{ErrorCode::kInvalidArgument, "event " + bad.row->event_id + ": " + verdict.error};
  }
  Failed(*bad.row, std::move(verdict), true, NoteOfSettlement(deps_.node_id, "undecodable"));
}

void RoundMarks::Skipped(const OutboxRow& row) { writer_.Skipped(row); }

void RoundMarks::Expired(const OutboxRow& row, int64_t server_now_ms) {
  writer_.Expired(row, server_now_ms - row.created_at_ms);
}

AttemptMark RoundMarks::Attempted(const OutboxRow& row, const core::PublishOutcome& outcome,
                                  size_t pack_events,
                                  std::optional<std::chrono::milliseconds> retry_after,
                                  size_t message_events) {
  if (pack_events > 0) deps_.metrics.ObservePublishLatency(outcome.latency.count());
  AttemptVerdict verdict = deps_.retry.Judge(outcome);
  if (retry_after && !verdict.delivered) verdict.retry_after = *retry_after;
  if (pack_events > 1 && !verdict.delivered && !verdict.dropped) {
    verdict.pack_size = static_cast<uint32_t>(pack_events);
  }
  if (outcome.status == core::PublishStatus::kSkipped) {
    writer_.Skipped(row);
    return AttemptMark::kDelivered;
  }
  AttemptNote note =
      NoteOfSend(deps_.node_id,
                 message_events > 0 ? message_events : std::max<size_t>(pack_events, 1), outcome);
  if (verdict.delivered) {
    writer_.Delivered(row, std::move(note));
    return AttemptMark::kDelivered;
  }
  if (outcome.attempted()) deps_.metrics.AddPublishFailureByReason(FailureReasonOf(outcome));
  const bool parked =
      deps_.park.Decide(row.retry_count, ParkPolicy::IsPermanent(outcome)) == ParkDecision::kPark;
  Failed(row, std::move(verdict), ParkPolicy::IsPermanent(outcome), std::move(note));
  return parked ? AttemptMark::kParked : AttemptMark::kFailed;
}

void RoundMarks::Failed(const OutboxRow& row, AttemptVerdict verdict, bool permanent,
                        AttemptNote note) {
  if (deps_.park.Decide(row.retry_count, permanent) == ParkDecision::kPark) {
    // Set aside: the room's later rows go back and the next claim takes them without it.
    writer_.Parked(row, std::move(verdict), deps_.park.after(), std::move(note));
  } else {
    writer_.Failed(row, std::move(verdict), std::move(note));
  }
}

void RoundMarks::HeldBack(const std::string& room_id, const std::string& event_id, uint64_t rows) {
  writer_.HeldBack(room_id, event_id, rows, deps_.clock.SteadyMs());
}

bool RoundMarks::Flush() {
  writer_.Flush();
  return !writer_.store_error();
}

MarksOutcome RoundMarks::Close(std::span<const int64_t> released) {
  writer_.Flush();
  writer_.Release(released);
  MarksOutcome outcome;
  outcome.published = writer_.published();
  outcome.skipped = writer_.skipped();
  outcome.failed = writer_.failed();
  outcome.undecodable = undecodable_;
  outcome.expired = writer_.expired();
  outcome.released = released.size();
  return outcome;
}

void RoundMarks::Summarize(size_t rooms_held, size_t released) const {
  writer_.Summarize(rooms_held, released);
}

}  // namespace room_outbox::relay
