// OutboxWorker's waves: whether another wave fits the lease, which rows it takes, sending it,
// each outcome, and what the round does after it.
#include "worker/outbox_worker.h"

#include <algorithm>
#include <utility>

#include "worker/round_context.h"

namespace room_outbox::relay {
namespace {

using std::chrono::milliseconds;

}  // namespace

bool OutboxWorker::WaveFits(RoundContext& round) {
  const auto rows = static_cast<uint64_t>(round.queues.remaining());
  if (stop_.stop_requested()) {
    logger_.Info(Line("stop requested: giving back rows not yet attempted").Add("rows", rows));
    round.queues.ReleaseAll();
    return false;
  }
  const int64_t lease_left = round.lease_end - clock_.SteadyMs();
  if (lease_left - kMarkMargin.count() < options_.publish_timeout.count()) {
    logger_.Warn(Line("lease too short for another wave: giving rows back")
                     .Add("rows", rows)
                     .Add("lease_left_ms", lease_left));
    round.lease_short = true;
    round.queues.ReleaseAll();
    return false;
  }
  return true;
}

std::vector<const QueuedRow*> OutboxWorker::TakeWave(RoundContext& round) {
  // A room's next rows of types that are never sent are delivered here, in order: they need no
  // send slot and do not count against the room's room_min_interval.
  auto sends = [this](std::string_view type) { return publisher_.Sends(type); };
  for (const QueuedRow* item : round.queues.PopNeverSent(sends)) {
    NoteAttempt(round, *item->row);
    round.writer.Delivered(*item->row);
  }
  const int64_t now = clock_.SteadyMs();
  // A wave is at most what is in flight at once: results are marked after every wave, so a
  // relay killed mid-claim leaves at most max_in_flight rows delivered but unmarked.
  std::vector<const QueuedRow*> wave =
      round.queues.NextWave(options_.max_in_flight,
                            [&](const std::string& room) { return pacing_.WaitMs(room, now) == 0; });
  if (wave.empty() && round.queues.remaining() > 0) {
    // Every room with rows left was sent to less than room_min_interval ago.
    const std::vector<std::string> waiting = round.queues.QueuesLeft();
    Sleep(milliseconds(pacing_.WaitMs(waiting, now)));
  }
  for (const QueuedRow* item : wave) {
    pacing_.Sent(item->queue, now);
  }
  return wave;
}

void OutboxWorker::SendWave(RoundContext& round, const std::vector<const QueuedRow*>& wave) {
  std::vector<core::PublishMessage> messages;
  messages.reserve(wave.size());
  for (const QueuedRow* item : wave) {
    messages.push_back(core::PublishMessage{
        item->row->id, item->row->drop_count, item->envelope, item->envelope_json, {}});
  }
  ++round.result.waves;
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
                      std::to_string(wave.size()) + " envelopes";
    }
    RecordOutcome(round, *wave[w], outcome);
  }
}

void OutboxWorker::RecordOutcome(RoundContext& round, const QueuedRow& item,
                                 const core::PublishOutcome& outcome) {
  const OutboxRow& row = *item.row;
  NoteBreaker(outcome);
  if (outcome.status == core::PublishStatus::kNotAttempted) {
    round.queues.GiveBack(item);  // the breaker kept it back: not an attempt, not charged
    return;
  }
  NoteAttempt(round, row);
  metrics_.ObservePublishLatency(outcome.latency.count());
  AttemptVerdict verdict = retry_.Judge(outcome);
  if (verdict.delivered) {
    round.writer.Delivered(row);
    return;
  }
  if (outcome.attempted()) metrics_.AddPublishFailureByReason(FailureReasonOf(outcome));
  // A room's refusal (MsgFreqCtrl, 10023) holds back that room only, as any head failure does.
  round.result.rate_limited =
      round.result.rate_limited || outcome.scope == core::FailureScope::kGlobalRate;
  if (park_.Decide(row.retry_count, ParkPolicy::IsPermanent(outcome)) == ParkDecision::kPark) {
    // Set aside: the room's later rows go back and the next claim takes them without it.
    round.writer.Parked(row, std::move(verdict), park_.after());
    (void)round.queues.HoldBack(item);  // released, not held: no held-back line
    return;
  }
  round.writer.Failed(row, std::move(verdict));
  const size_t held = round.queues.HoldBack(item);
  if (held > 0) {
    round.writer.HeldBack(row.room_id, row.event_id, held, clock_.SteadyMs());
  }
}

void OutboxWorker::NoteBreaker(const core::PublishOutcome& outcome) {
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

bool OutboxWorker::AfterWave(RoundContext& round) {
  round.writer.Flush();
  if (round.writer.store_error()) {
    // The database is failing: sending more now would only deliver rows whose results cannot
    // be written.
    round.queues.ReleaseAll();
    return false;
  }
  if (round.result.rate_limited && round.queues.remaining() > 0) {
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

}  // namespace room_outbox::relay
