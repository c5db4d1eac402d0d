#include "worker/room_sender.h"

#include <algorithm>
#include <string>

#include "worker/result_writer.h"
#include "worker/worker_log.h"

namespace room_outbox::relay {

using std::chrono::milliseconds;

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
  SendOutcome sent;
  while (round.queues.remaining() > 0 && WaveFits(round, sent)) {
    const std::vector<Pack> wave = TakeWave(round);
    if (wave.empty()) {
      continue;  // the rooms left were paced, or only never-sent rows were left
    }
    SendWave(round, wave, sent);
    if (!AfterWave(round, sent)) {
      break;
    }
  }
  return sent;
}

bool RoomSender::WaveFits(RoundContext& round, SendOutcome& sent) {
  const auto rows = static_cast<uint64_t>(round.queues.remaining());
  if (signal_.stop_requested()) {
    logger_.Info(Line("stop requested: giving back rows not yet attempted").Add("rows", rows));
    round.queues.ReleaseAll();
    return false;
  }
  const int64_t lease_left = round.lease_end - clock_.SteadyMs();
  if (lease_left - kMarkMargin.count() < options_.publish_timeout.count()) {
    logger_.Warn(Line("lease too short for another wave: giving rows back")
                     .Add("rows", rows)
                     .Add("lease_left_ms", lease_left));
    sent.lease_short = true;
    round.queues.ReleaseAll();
    return false;
  }
  return true;
}

// A room's next rows that need no send are settled here, in order: rows of types that are never
// sent are skipped (marked published), expired rows parked. Neither takes a send slot or counts
// against the room's room_min_interval, so the room's next row to send is the front of its queue
// afterwards.
void RoomSender::PopUnsent(RoundContext& round) {
  const int64_t server_now_ms = round.claim.server_now_ms;
  auto unsent = [&](const QueuedRow& item) {
    const OutboxRow& row = *item.row;
    return !publisher_.Sends(row.event_type) ||
           expiry_.Expired(row.event_type, row.created_at_ms, row.parked_before, server_now_ms);
  };
  for (const QueuedRow* item : round.queues.PopFrontWhile(unsent)) {
    round.NoteAttempt(*item->row);
    if (publisher_.Sends(item->row->event_type)) {
      round.marks.Expired(*item->row, server_now_ms);
    } else {
      round.marks.Skipped(*item->row);
    }
  }
}

std::vector<RoomSender::Pack> RoomSender::TakeWave(RoundContext& round) {
  PopUnsent(round);
  const int64_t now = clock_.SteadyMs();
  // A wave is at most what is in flight at once: results are marked after every wave, so a
  // relay killed mid-claim leaves at most max_in_flight messages delivered but unmarked.
  const std::vector<const QueuedRow*> fronts = round.queues.NextWave(
      options_.max_in_flight,
      [&](const std::string& room) { return pacing_.WaitMs(room, now) == 0; });
  if (fronts.empty() && round.queues.remaining() > 0) {
    // Every room with rows left was sent to less than room_min_interval ago.
    const std::vector<std::string> waiting = round.queues.QueuesLeft();
    waits_.Sleep(milliseconds(pacing_.WaitMs(waiting, now)));
  }
  std::vector<Pack> wave;
  wave.reserve(fronts.size());
  for (const QueuedRow* front : fronts) {
    pacing_.Sent(front->queue, now);  // room_min_interval counts messages
    wave.push_back(PackFrom(round, *front));
  }
  return wave;
}

// The front row and the rows after it that go in its message (PackRule).
RoomSender::Pack RoomSender::PackFrom(RoundContext& round, const QueuedRow& front) {
  Pack pack{&front};
  if (pack_rule_.LimitFor(front) <= 1) return pack;
  PackRule::Pack building(pack_rule_, front);
  const int64_t server_now_ms = round.claim.server_now_ms;
  auto fits = [&](const QueuedRow& next) {
    const OutboxRow& row = *next.row;
    return publisher_.Sends(row.event_type) &&
           !expiry_.Expired(row.event_type, row.created_at_ms, row.parked_before, server_now_ms) &&
           building.Take(next);
  };
  while (const QueuedRow* next = round.queues.PopFrontIf(front.queue, fits)) {
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

void RoomSender::SendWave(RoundContext& round, const std::vector<Pack>& wave, SendOutcome& sent) {
  std::vector<core::PublishMessage> messages;
  messages.reserve(wave.size());
  for (const Pack& pack : wave) {
    const QueuedRow& first = *pack.front();
    core::PublishMessage& message = messages.emplace_back(core::PublishMessage{
        first.row->id, first.row->drop_count, first.envelope, first.envelope_json, {}, {}});
    for (size_t k = 1; k < pack.size(); ++k) {
      message.rest.push_back(core::PackedEvent{&pack[k]->envelope, pack[k]->envelope_json});
    }
  }
  ++sent.waves;
  metrics_.AddInFlight(static_cast<int64_t>(messages.size()));
  const std::vector<core::PublishOutcome> outcomes =
      publisher_.PublishMany(messages, options_.publish_timeout, options_.max_in_flight);
  metrics_.AddInFlight(-static_cast<int64_t>(messages.size()));
  for (size_t w = 0; w < wave.size(); ++w) {
    core::PublishOutcome outcome;
    if (w < outcomes.size()) {
      outcome = outcomes[w];
    } else {
      outcome.status = core::PublishStatus::kUnknown;
      outcome.error = "publisher returned " + std::to_string(outcomes.size()) + " outcomes for " +
                      std::to_string(wave.size()) + " messages";
    }
    RecordOutcome(round, wave[w], outcome, sent);
  }
}

// One answer decides every row of the pack: each is marked with it, the first recording the
// pack (pack_size) when it failed without a definite drop.
void RoomSender::RecordOutcome(RoundContext& round, const Pack& pack,
                               const core::PublishOutcome& outcome, SendOutcome& sent) {
  NoteBreaker(outcome);
  if (outcome.status == core::PublishStatus::kNotAttempted) {
    // The breaker kept it back: not an attempt, not charged.
    for (const QueuedRow* item : pack) round.queues.GiveBack(*item);
    return;
  }
  if (outcome.status == core::PublishStatus::kPublished) metrics_.AddMessageDelivered(pack.size());
  if (outcome.scope == core::FailureScope::kRoom) metrics_.AddRoomRefusal();
  AttemptMark mark = AttemptMark::kDelivered;
  for (size_t k = 0; k < pack.size(); ++k) {
    round.NoteAttempt(*pack[k]->row);
    const AttemptMark row_mark =
        round.marks.Attempted(*pack[k]->row, outcome, k == 0 ? pack.size() : 0);
    if (k == 0) mark = row_mark;
  }
  if (mark == AttemptMark::kDelivered) return;
  // A room's refusal (MsgFreqCtrl, 10023) holds back that room only, as any head failure does.
  sent.rate_limited = sent.rate_limited || outcome.scope == core::FailureScope::kGlobalRate;
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

bool RoomSender::AfterWave(RoundContext& round, const SendOutcome& sent) {
  if (!round.marks.Flush()) {
    // The database is failing: sending more now would only deliver rows whose results cannot
    // be written.
    round.queues.ReleaseAll();
    return false;
  }
  if (sent.rate_limited && round.queues.remaining() > 0) {
    logger_.Warn(Line("rate limited by IM: giving back the rest of the batch")
                     .Add("rows", static_cast<uint64_t>(round.queues.remaining())));
    round.queues.ReleaseAll();
  }
  if (publisher_.breaker_open() && round.queues.remaining() > 0) {
    logger_.Debug(Line("IM circuit breaker open: giving back the rest of the batch uncharged")
                      .Add("rows", static_cast<uint64_t>(round.queues.remaining())));
    round.queues.ReleaseAll();
  }
  return true;
}

LogLine RoomSender::Line(std::string_view message) const {
  return WorkerLine(options_.node_id, message);
}

}  // namespace room_outbox::relay
