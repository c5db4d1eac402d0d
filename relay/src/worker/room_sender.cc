#include "worker/room_sender.h"

#include <algorithm>
#include <limits>
#include <string>
#include <utility>

#include "worker/result_writer.h"
#include "worker/worker_log.h"

namespace room_outbox::relay {

using std::chrono::milliseconds;

namespace {

// How long the stream may wait for answers when no room comes ready by time alone.
constexpr int64_t kNoReadyRoomMs = std::numeric_limits<int32_t>::max();

}  // namespace

RoomSender::RoomSender(const WorkerOptions& options, core::Publisher& publisher, LoopClock& clock,
                       LoopSignal& signal, RoomPacing& pacing, LoopWaits& waits, Metrics& metrics,
                       Logger& logger)
    : options_(options),
      expiry_(options.max_age_by_type),
      pack_rule_(options.pack_max_events, options.max_body_bytes, options.group_id_prefix),
      publisher_(publisher),
      clock_(clock),
      signal_(signal),
      pacing_(pacing),
      waits_(waits),
      metrics_(metrics),
      logger_(logger) {}

SendOutcome RoomSender::Send(RoundContext& round) {
  round_ = &round;
  sent_ = SendOutcome{};
  in_flight_.clear();
  rooms_in_flight_.clear();
  unmarked_messages_ = 0;
  ended_ = false;
  breaker_seen_open_ = false;
  in_burst_ = false;
  if (round.queues.remaining() > 0) {
    publisher_.PublishStream(*this, options_.publish_timeout, options_.max_in_flight);
  }
  for (auto& [tag, entry] : in_flight_) {
    // A publisher must answer every message it took; one that did not leaves the outcome unknown.
    core::PublishOutcome unknown;
    unknown.status = core::PublishStatus::kUnknown;
    unknown.error = "the publisher ended the stream without an answer";
    metrics_.AddInFlight(-1);
    RecordOutcome(entry.pack, unknown);
  }
  in_flight_.clear();
  if (unmarked_messages_ > 0) FlushMarks();
  if (round.queues.remaining() > 0) round.queues.ReleaseAll();
  metrics_.SetRoomsBackedOff(static_cast<int64_t>(pacing_.backed_off()));
  round_ = nullptr;
  return sent_;
}

std::optional<core::FeedMessage> RoomSender::Next() {
  if (!SendingGoesOn()) return std::nullopt;
  const int64_t now = clock_.SteadyMs();
  const QueuedRow* next = round_->queues.PopNextToSend(
      [&](const std::string& room) { return !InFlightRoom(room); },
      [&](const QueuedRow& item) { return Unsent(*item.row); },
      [&](const QueuedRow& item) { Settle(*item.row); },
      [&](const std::string& room) { return pacing_.WaitMs(room, now) == 0; });
  if (next == nullptr) return std::nullopt;
  const QueuedRow& front = *next;
  pacing_.Sent(front.queue, now);  // room_min_interval counts messages
  Pack pack = PackFrom(front);
  const size_t tag = next_tag_++;
  InFlight& entry = in_flight_[tag];
  entry.message = MessageOf(pack);
  entry.pack = std::move(pack);
  rooms_in_flight_.insert(front.queue);
  metrics_.AddInFlight(1);
  if (!in_burst_) {
    ++sent_.waves;
    in_burst_ = true;
  }
  return core::FeedMessage{&entry.message, tag};
}

void RoomSender::Done(size_t tag, core::PublishOutcome outcome) {
  auto it = in_flight_.find(tag);
  if (it == in_flight_.end()) return;  // not ours: nothing to mark
  metrics_.AddInFlight(-1);
  in_burst_ = false;
  rooms_in_flight_.erase(it->second.pack.front()->queue);
  RecordOutcome(it->second.pack, outcome);
  in_flight_.erase(it);
  if (unmarked_messages_++ == 0) unmarked_since_ = clock_.SteadyMs();
  breaker_seen_open_ = breaker_seen_open_ || publisher_.breaker_open();
  if (unmarked_messages_ >= options_.max_in_flight) FlushMarks();
}

milliseconds RoomSender::Pause() {
  in_burst_ = false;
  const int64_t now = clock_.SteadyMs();
  if (unmarked_messages_ > 0 && now - unmarked_since_ >= kMarkDelay.count()) FlushMarks();
  // With every request slot taken, a room coming ready changes nothing: only an answer does.
  int64_t wait = in_flight_.size() < options_.max_in_flight ? ReadyInMs(now) : kNoReadyRoomMs;
  if (unmarked_messages_ > 0) {
    wait = std::min(wait, unmarked_since_ + kMarkDelay.count() - now);
  }
  return milliseconds(std::max<int64_t>(wait, 1));
}

bool RoomSender::Idle() {
  in_burst_ = false;
  if (unmarked_messages_ > 0) FlushMarks();
  if (!SendingGoesOn()) return false;
  PopUnsent();
  if (round_->queues.remaining() == 0) return false;
  const int64_t wait = ReadyInMs(clock_.SteadyMs());
  if (wait > 0) {
    // Every room with rows left was sent to less than its gap ago.
    waits_.Sleep(milliseconds(wait));
  }
  return true;
}

// False once the sending has ended, or when it ends now: a stop request, a lease too short for
// another message, a failed mark, a global rate limit or the open breaker. The rows not yet sent
// are then released; the messages in flight finish.
bool RoomSender::SendingGoesOn() {
  if (ended_) return false;
  const auto rows = static_cast<uint64_t>(round_->queues.remaining());
  if (signal_.stop_requested()) {
    logger_.Info(Line("stop requested: giving back rows not yet attempted").Add("rows", rows));
  } else if (const int64_t lease_left = round_->lease_end - clock_.SteadyMs();
             lease_left - kMarkMargin.count() < options_.publish_timeout.count()) {
    logger_.Warn(Line("lease too short for another message: giving rows back")
                     .Add("rows", rows)
                     .Add("lease_left_ms", lease_left));
    sent_.lease_short = true;
  } else if (sent_.rate_limited) {
    logger_.Warn(Line("rate limited by IM: giving back the rest of the batch").Add("rows", rows));
  } else if (breaker_seen_open_) {
    logger_.Debug(Line("IM circuit breaker open: giving back the rest of the batch uncharged")
                      .Add("rows", rows));
  } else {
    return true;
  }
  EndSending();
  return false;
}

void RoomSender::EndSending() {
  ended_ = true;
  round_->queues.ReleaseAll();
}

// A room's next rows that need no send are settled here, in order: rows of types that are never
// sent are skipped (marked published), expired rows parked. Neither takes a send slot or counts
// against the room's room_min_interval, so the room's next row to send is the front of its queue
// afterwards. A room with a message in flight keeps its rows: they follow its answer.
void RoomSender::PopUnsent() {
  for (const QueuedRow* item : round_->queues.PopFrontWhile(
           [&](const QueuedRow& item) { return !InFlightRoom(item.queue) && Unsent(*item.row); })) {
    Settle(*item->row);
  }
}

bool RoomSender::Unsent(const OutboxRow& row) const {
  return !publisher_.Sends(row.event_type) ||
         expiry_.Expired(row.event_type, row.created_at_ms, row.parked_before,
                         round_->claim.server_now_ms);
}

void RoomSender::Settle(const OutboxRow& row) {
  round_->NoteAttempt(row);
  if (publisher_.Sends(row.event_type)) {
    round_->marks.Expired(row, round_->claim.server_now_ms);
  } else {
    round_->marks.Skipped(row);
  }
}

// The front row and the rows after it that go in its message (PackRule).
RoomSender::Pack RoomSender::PackFrom(const QueuedRow& front) {
  Pack pack{&front};
  if (pack_rule_.LimitFor(front) <= 1) return pack;
  PackRule::Pack building(pack_rule_, front);
  const int64_t server_now_ms = round_->claim.server_now_ms;
  auto fits = [&](const QueuedRow& next) {
    const OutboxRow& row = *next.row;
    return publisher_.Sends(row.event_type) &&
           !expiry_.Expired(row.event_type, row.created_at_ms, row.parked_before, server_now_ms) &&
           building.Take(next);
  };
  while (const QueuedRow* next = round_->queues.PopFrontIf(front.queue, fits)) {
    pack.push_back(next);
  }
  if (front.row->pack_size > 0 && pack.size() < pack_rule_.LimitFor(front)) {
    // Fewer of the recorded pack's rows than it carried (PackRule): sent as they are, not held.
    logger_.Warn(Line("recorded pack resent with fewer events: another Random, so the events both "
                      "sends carry may reach the room twice")
                     .Add("room_id", front.row->room_id)
                     .Add("event_id", front.row->event_id)
                     .Add("pack_size", static_cast<uint64_t>(front.row->pack_size))
                     .Add("events", static_cast<uint64_t>(pack.size())));
  }
  return pack;
}

core::PublishMessage RoomSender::MessageOf(const Pack& pack) {
  const QueuedRow& first = *pack.front();
  core::PublishMessage message{
      first.row->id, first.row->drop_count, first.envelope, first.envelope_json, {}, {}};
  for (size_t k = 1; k < pack.size(); ++k) {
    message.rest.push_back(core::PackedEvent{&pack[k]->envelope, pack[k]->envelope_json});
  }
  return message;
}

// One answer decides every row of the pack: each is marked with it, the first recording the
// pack (pack_size) when it failed without a definite drop.
void RoomSender::RecordOutcome(const Pack& pack, const core::PublishOutcome& outcome) {
  RoundContext& round = *round_;
  NoteBreaker(outcome);
  if (outcome.status == core::PublishStatus::kNotAttempted) {
    // The breaker kept it back: not an attempt, not charged.
    for (const QueuedRow* item : pack) round.queues.GiveBack(*item);
    return;
  }
  const std::string& room = pack.front()->queue;
  if (outcome.status == core::PublishStatus::kPublished) {
    metrics_.AddMessageDelivered(pack.size());
    pacing_.Delivered(room);
  }
  std::optional<milliseconds> retry_after;
  if (outcome.scope == core::FailureScope::kRoom) {
    metrics_.AddRoomRefusal();
    pacing_.Refused(room);  // this room alone backs off, and is tried again after its new gap
    if (pacing_.enabled()) retry_after = milliseconds(pacing_.GapMs(room));
  }
  AttemptMark mark = AttemptMark::kDelivered;
  for (size_t k = 0; k < pack.size(); ++k) {
    round.NoteAttempt(*pack[k]->row);
    const AttemptMark row_mark = round.marks.Attempted(
        *pack[k]->row, outcome, k == 0 ? pack.size() : 0, retry_after, pack.size());
    if (k == 0) mark = row_mark;
  }
  if (mark == AttemptMark::kDelivered) return;
  // A room's refusal (MsgFreqCtrl, 10023) holds back that room only, as any head failure does.
  sent_.rate_limited = sent_.rate_limited ||
                       (outcome.scope == core::FailureScope::kGlobalRate && !outcome.budget_slowed);
  const QueuedRow& first = *pack.front();
  const size_t held = round.queues.HoldBack(first);
  // Behind a parked row the later rows are released, not held: no held-back line.
  if (mark == AttemptMark::kFailed && held > 0) {
    round.marks.HeldBack(first.row->room_id, first.row->event_id, held);
  }
}

void RoomSender::NoteBreaker(const core::PublishOutcome& outcome) {
  if (outcome.breaker == core::BreakerTransition::kOpened) {
    const milliseconds cooldown = std::max(options_.breaker_cooldown, outcome.min_cooldown);
    logger_.Warn(Line("IM circuit breaker open: app-wide IM error, no sends until a probe after "
                      "the cooldown; rows kept back are not charged")
                     .Add("im_error_code", static_cast<int64_t>(outcome.im_error_code))
                     .Add("cooldown_ms", static_cast<int64_t>(cooldown.count()))
                     .Add("error", outcome.error));
  } else if (outcome.breaker == core::BreakerTransition::kClosed) {
    logger_.Info(Line("IM circuit breaker closed: the probe succeeded, sending again"));
  }
}

// Writes the marks gathered so far. The database failing ends the sending: sending more now would
// only deliver rows whose results cannot be written.
bool RoomSender::FlushMarks() {
  unmarked_messages_ = 0;
  if (round_->marks.Flush()) return true;
  if (!ended_) EndSending();
  return false;
}

int64_t RoomSender::ReadyInMs(int64_t now) const {
  int64_t wait = kNoReadyRoomMs;
  round_->queues.ForEachQueueLeft([&](const std::string& room) {
    if (!InFlightRoom(room)) wait = std::min(wait, pacing_.WaitMs(room, now));
  });
  return wait;
}

LogLine RoomSender::Line(std::string_view message) const {
  return WorkerLine(options_.node_id, message);
}

}  // namespace room_outbox::relay
