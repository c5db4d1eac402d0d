#include "worker/outbox_worker.h"

#include <algorithm>
#include <utility>

#include "worker/result_writer.h"

namespace room_outbox::relay {
namespace {

using std::chrono::milliseconds;

}  // namespace

// One claim on its way through a round. The queues point into `claim`: it never moves.
struct OutboxWorker::RoundContext {
  RoundContext(RoundMode mode, Claim claim_in, int64_t lease_end_steady, OutboxWorker& worker)
      : mode(mode),
        claim(std::move(claim_in)),
        lease_end(lease_end_steady),
        queues(worker.options_.per_room_order()),
        writer(worker.store_, worker.metrics_, worker.logger_, worker.options_.node_id, claim.token,
               &worker.held_rooms_) {}

  const RoundMode mode;
  const Claim claim;
  const int64_t lease_end;  // monotonic
  RoomQueues queues;
  ResultWriter writer;
  RoundResult result;
  size_t attempted = 0;      // rows attempted in this round (sent, delivered or undecodable)
  bool lease_short = false;  // rows were released because the lease could not hold a wave
};

OutboxWorker::OutboxWorker(WorkerOptions options, RelayStore& store, Publisher& publisher,
                           LoopClock& clock, StopSignal& stop, Metrics& metrics, Logger& logger,
                           std::function<void(std::string_view)> on_status,
                           RelayStore* ahead_store)
    : options_(std::move(options)),
      store_(store),
      publisher_(publisher),
      clock_(clock),
      stop_(stop),
      metrics_(metrics),
      logger_(logger),
      on_status_(std::move(on_status)),
      retry_(options_.poll_interval, options_.rate_limited_retry),
      park_(options_.park_permanent_after),
      pacing_(options_.per_room_order() ? options_.room_min_interval : milliseconds(0)) {
  if (ahead_store != nullptr) ahead_ = std::make_unique<ClaimAhead>(*ahead_store, clock_);
}

RoundResult OutboxWorker::RunRound() { return Round(RoundMode::kDaemon); }

RoundResult OutboxWorker::Round(RoundMode mode, bool claim_ahead) {
  if (stop_.stop_requested()) {
    return RoundResult{};
  }
  ClaimAhead::Taken taken = TakeClaim(MakeClaimOptions(mode));
  Result<Claim>& claim = taken.claim;
  const int64_t claimed_at = taken.claimed_at;
  if (!claim && claim.error().code == ErrorCode::kAborted) {
    // A deadlock or lock wait timeout that the store's own reruns did not get past: not a
    // database outage; the next round claims again.
    logger_.Debug(
        Line("outbox claim aborted by lock contention").Add("error", claim.error().message));
    return RoundResult{};
  }
  if (!claim) {
    return ClaimFailed(claim.error());
  }
  NotePacedRooms(*claim, claimed_at);
  RoundContext round(mode, std::move(*claim), claimed_at + options_.lease.count(), *this);
  round.result.claimed_ahead = taken.made_ahead;
  round.result.scheduled = !round.claim.paced_rooms.empty();
  Prepare(round);
  if (claim_ahead) StartAhead(round);
  while (round.queues.remaining() > 0 && WaveFits(round)) {
    const std::vector<const QueuedRow*> wave = TakeWave(round);
    if (wave.empty()) {
      continue;  // the rooms left were paced, or only never-sent rows were left
    }
    SendWave(round, wave);
    if (!AfterWave(round)) {
      break;
    }
  }
  return Finish(round);
}

ClaimOptions OutboxWorker::MakeClaimOptions(RoundMode mode) {
  ClaimOptions o;
  o.limit = options_.batch_size;
  o.lease_ms = options_.lease.count();
  o.per_room_order = options_.per_room_order();
  if (mode == RoundMode::kDaemon) {
    // A round sends a paced room at most one poll_interval's worth of rows; its other due rows
    // are scheduled after them, and the next claim takes other rooms' rows meanwhile. (--once
    // keeps whole runs: it ends when nothing is due, so nothing may be scheduled for later.)
    pacing_.CutRuns(o, options_.poll_interval);
    if (o.run_cut_rows > 0) {
      o.skip_event_types = options_.skip_event_types;
    }
    // Paced rooms (sent to less than room_min_interval ago): their rows wait in the database,
    // not in a round.
    pacing_.AddPaced(o, clock_.SteadyMs());
  }
  return o;
}

ClaimAhead::Taken OutboxWorker::TakeClaim(const ClaimOptions& options) {
  if (ahead_ && ahead_->pending()) {
    ClaimAhead::Taken taken = std::move(*ahead_->Take());  // made while the last round was sent
    // An empty one says only that the last round's rooms were in flight: claim again now.
    if (!taken.claim || !taken.claim->rows.empty()) return taken;
  }
  // The lease runs from just before the call: a slow claim leaves less of it.
  const int64_t claimed_at = clock_.SteadyMs();
  // This claim sees every row committed before a wake-up taken here; a later one stays pending.
  (void)stop_.TakeWake();
  return ClaimAhead::Taken{store_.ClaimDue(options), claimed_at, false};
}

void OutboxWorker::StartAhead(const RoundContext& round) {
  // Only a full claim says more rows are due; a stop claims nothing new. With room_min_interval
  // the claim made ahead cannot know which rooms this round is about to send to: measured (bench
  // 1a vs 1a-seq) its rows wait out room_min_interval in the next round more than the overlap
  // saves, so a pacing relay claims after its round, with every paced room known.
  if (!ahead_ || !round.result.full || stop_.stop_requested() || pacing_.enabled()) return;
  (void)stop_.TakeWake();  // as in TakeClaim: the claim made ahead sees what was committed before
  ahead_->Start(MakeClaimOptions(RoundMode::kDaemon));
}

void OutboxWorker::DiscardAhead() {
  if (!ahead_ || !ahead_->pending()) return;
  ClaimAhead::Taken taken = std::move(*ahead_->Take());
  if (!taken.claim) {
    // Nothing was leased; the next round claims (and meets the database's state) itself.
    logger_.Warn(Line("claim made ahead failed").Add("error", taken.claim.error().message));
    return;
  }
  if (taken.claim->rows.empty()) return;
  std::vector<int64_t> ids;
  ids.reserve(taken.claim->rows.size());
  for (const OutboxRow& row : taken.claim->rows) ids.push_back(row.id);
  auto released = store_.Release(taken.claim->token, ids);
  if (!released) {
    logger_.Error(Line("claim made ahead not given back: its rows are due when its lease ends")
                      .Add("rows", static_cast<uint64_t>(ids.size()))
                      .Add("error", released.error().message));
    return;
  }
  logger_.Debug(Line("claim made ahead given back unattempted")
                    .Add("rows", static_cast<uint64_t>(*released)));
}

RoundResult OutboxWorker::ClaimFailed(const Error& error) {
  logger_.Error(Line("outbox claim failed").Add("error", error.message));
  metrics_.AddRound(true);
  RoundResult result;
  result.error = error;
  result.store_error = true;
  return result;
}

void OutboxWorker::NotePacedRooms(const Claim& claim, int64_t claimed_at) {
  for (const PacedRoom& room : claim.paced_rooms) {
    logger_.Debug(Line("room paced: its later rows are scheduled after this round")
                      .Add("room_id", room.room_id)
                      .Add("rows_scheduled", room.rows_scheduled));
    // How long after the claim the room's last scheduled slot comes, on this process's clock.
    pacing_.Scheduled(claimed_at, room.paced_for_ms);
  }
}

void OutboxWorker::Prepare(RoundContext& round) {
  RoundResult& result = round.result;
  result.claimed = round.claim.rows.size();
  // A short claim is not the end of a backlog when per-room order left rows out of it; an empty
  // one still waits poll_interval, so a selection that keeps nothing cannot spin.
  result.full =
      result.claimed >= options_.batch_size || (round.claim.more_due && result.claimed > 0);
  round.queues.Load(round.claim.rows, [&](const OutboxRow& row) {
    // Due again within one --once run: left for a later run; its room's later rows wait too.
    return round.mode == RoundMode::kDrain && drain_.Attempted(row.id);
  });
  for (const UndecodableRow& bad : round.queues.undecodable()) {
    NoteAttempt(round, *bad.row);
    AttemptVerdict verdict = retry_.Undecodable(bad.why);
    ++result.undecodable;
    metrics_.AddPublishFailureByReason(FailureReason::kUndecodable);
    if (!result.error) {
      result.error =
          Error{ErrorCode::kInvalidArgument, "event " + bad.row->event_id + ": " + verdict.error};
    }
    if (park_.Decide(bad.row->retry_count, true) == ParkDecision::kPark) {
      round.writer.Parked(*bad.row, std::move(verdict), park_.after());
    } else {
      round.writer.Failed(*bad.row, std::move(verdict));
    }
  }
  for (const HeldRoom& held : round.queues.held_rooms()) {
    round.writer.HeldBack(held.room_id, "", held.rows, clock_.SteadyMs());
  }
  pacing_.Forget(clock_.SteadyMs());
}

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
  std::vector<PublishMessage> messages;
  messages.reserve(wave.size());
  for (const QueuedRow* item : wave) {
    messages.push_back(PublishMessage{item->row->id, item->row->drop_count, item->envelope, {}});
  }
  ++round.result.waves;
  metrics_.AddInFlight(static_cast<int64_t>(messages.size()));
  const std::vector<PublishOutcome> outcomes =
      publisher_.PublishMany(messages, options_.publish_timeout, options_.max_in_flight);
  metrics_.AddInFlight(-static_cast<int64_t>(messages.size()));
  for (size_t w = 0; w < wave.size(); ++w) {
    PublishOutcome outcome;
    if (w < outcomes.size()) {
      outcome = outcomes[w];
    } else {
      outcome.status = PublishStatus::kUnknown;
      outcome.error = "publisher returned " + std::to_string(outcomes.size()) + " outcomes for " +
                      std::to_string(wave.size()) + " envelopes";
    }
    RecordOutcome(round, *wave[w], outcome);
  }
}

void OutboxWorker::RecordOutcome(RoundContext& round, const QueuedRow& item,
                                 const PublishOutcome& outcome) {
  const OutboxRow& row = *item.row;
  NoteBreaker(outcome);
  if (outcome.status == PublishStatus::kNotAttempted) {
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
      round.result.rate_limited || outcome.scope == FailureScope::kGlobalRate;
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

void OutboxWorker::NoteBreaker(const PublishOutcome& outcome) {
  if (outcome.breaker == BreakerTransition::kOpened) {
    const milliseconds cooldown = std::max(options_.breaker_cooldown, outcome.min_cooldown);
    logger_.Warn(Line("IM circuit breaker open: app-wide IM error, no sends until a probe after "
                      "the cooldown; rows kept back are not charged")
                     .Add("im_error_code", static_cast<int64_t>(outcome.im_error_code))
                     .Add("cooldown_ms", static_cast<int64_t>(cooldown.count()))
                     .Add("error", outcome.error));
  } else if (outcome.breaker == BreakerTransition::kClosed) {
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

RoundResult OutboxWorker::Finish(RoundContext& round) {
  round.writer.Flush();
  const std::vector<int64_t>& released = round.queues.released();
  round.writer.Release(released);
  if (round.mode == RoundMode::kDrain) {
    for (int64_t id : released) drain_.NoteReleased(id);
  }
  RoundResult& result = round.result;
  result.published = round.writer.published();
  result.failed = round.writer.failed();
  result.released = released.size();
  if (round.writer.store_error()) {
    result.error = *round.writer.store_error();
    result.store_error = true;
  }
  CheckReleasedWhole(round);
  round.writer.Summarize(round.queues.rooms_held(), result.released);
  result.breaker_open = publisher_.breaker_open();
  metrics_.SetImBreakerOpen(result.breaker_open);
  metrics_.AddRound(result.error.has_value());
  RefreshStats();
  metrics_.SetRoomsHeldBack(HeldBackGauge(last_stats_, round.queues.rooms_held()));
  LogRound(result);
  return result;
}

void OutboxWorker::CheckReleasedWhole(RoundContext& round) {
  RoundResult& result = round.result;
  if (!round.lease_short || round.attempted > 0) {
    return;
  }
  // Every row given back unsent: a claim that cannot hold one wave would otherwise repeat
  // forever without anyone noticing.
  result.released_unsent = true;
  const std::string why = "claim of " + std::to_string(result.claimed) +
                          " rows given back unsent: the lease left less than publish_timeout (" +
                          std::to_string(options_.publish_timeout.count()) +
                          "ms) + the mark margin (" + std::to_string(kMarkMargin.count()) +
                          "ms) for one wave";
  logger_.Warn(Line("claim given back whole without an attempt: a failed round")
                   .Add("rows", static_cast<uint64_t>(result.claimed))
                   .Add("lease_ms", static_cast<int64_t>(options_.lease.count()))
                   .Add("error", why));
  if (!result.error) {
    result.error = Error{ErrorCode::kDeadlineExceeded, why};
  }
}

void OutboxWorker::NoteAttempt(RoundContext& round, const OutboxRow& row) {
  ++round.attempted;
  if (round.mode == RoundMode::kDrain) {
    drain_.NoteAttempted(row.id);
  }
}

int64_t OutboxWorker::HeldBackGauge(const std::optional<OutboxStats>& stats,
                                    size_t rooms_held_last_round) {
  // What the database holds (rooms whose head has failed) once it could be read; until then
  // what this round saw.
  return stats ? stats->rooms_held_back : static_cast<int64_t>(rooms_held_last_round);
}

void OutboxWorker::LogRound(const RoundResult& result) {
  logger_.Debug(Line("outbox round")
                    .Add("claimed", static_cast<uint64_t>(result.claimed))
                    .Add("published", static_cast<uint64_t>(result.published))
                    .Add("failed", static_cast<uint64_t>(result.failed))
                    .Add("released", static_cast<uint64_t>(result.released))
                    .Add("waves", static_cast<uint64_t>(result.waves))
                    .Add("claimed_ahead", result.claimed_ahead));
}

void OutboxWorker::RefreshStats() {
  const int64_t now = clock_.SteadyMs();
  if (stats_refreshed_ && now - last_stats_steady_ms_ < options_.stats_interval.count()) {
    return;
  }
  stats_refreshed_ = true;
  last_stats_steady_ms_ = now;
  auto stats = store_.Stats();
  if (!stats) {
    logger_.Warn(Line("outbox stats unavailable").Add("error", stats.error().message));
    return;
  }
  last_stats_ = *stats;
  metrics_.SetPending(stats->pending, stats->oldest_pending_age_ms);
}

bool OutboxWorker::Sleep(milliseconds duration) {
  const milliseconds longest = pacing_.MaxSleep(options_.poll_interval);
  return clock_.SleepFor(std::clamp(duration, milliseconds(0), longest), stop_);
}

bool OutboxWorker::Idle(milliseconds duration) {
  const milliseconds longest = pacing_.MaxSleep(options_.poll_interval);
  return clock_.IdleFor(std::clamp(duration, milliseconds(0), longest), stop_);
}

LogLine OutboxWorker::Line(std::string_view message) const {
  LogLine line(message);
  line.Add("worker", "room_outbox").Add("node_id", options_.node_id);
  return line;
}

void OutboxWorker::LogStarted() {
  logger_.Info(
      Line("outbox worker started")
          .Add("poll_interval_ms", static_cast<int64_t>(options_.poll_interval.count()))
          .Add("batch_size", static_cast<uint64_t>(options_.batch_size))
          .Add("publish_timeout_ms", static_cast<int64_t>(options_.publish_timeout.count()))
          .Add("max_in_flight", static_cast<uint64_t>(options_.max_in_flight))
          .Add("ordering", options_.per_room_order() ? "per_room" : "none"));
}

void OutboxWorker::Run() {
  LogStarted();
  milliseconds backoff = options_.poll_interval;
  const milliseconds max_backoff = std::max(options_.max_error_backoff, options_.poll_interval);
  uint64_t consecutive_errors = 0;
  while (!stop_.stop_requested()) {
    RoundResult round = Round(RoundMode::kDaemon, true);
    metrics_.SetDbUp(!round.store_error);
    if (round.store_error) {
      DiscardAhead();
      ++consecutive_errors;
      if (consecutive_errors == 1 && on_status_) {
        on_status_("database error, retrying: " + round.error->message);
      }
      logger_.Warn(Line("database error: backing off")
                       .Add("consecutive_errors", consecutive_errors)
                       .Add("backoff_ms", static_cast<int64_t>(backoff.count())));
      // A fixed back-off, not derived from a clock reading: no clamp to the poll interval.
      if (clock_.SleepFor(backoff, stop_)) break;
      backoff = std::min(backoff * 2, max_backoff);
      continue;
    }
    if (consecutive_errors > 0) {
      logger_.Info(Line("database reachable again").Add("after_errors", consecutive_errors));
      if (on_status_) on_status_("running");
      consecutive_errors = 0;
      backoff = options_.poll_interval;
    }
    // While the breaker is open every round gives its claim back: wait poll_interval between
    // them; the breaker's probe goes out with the first send after its cooldown.
    const bool held = round.rate_limited || round.breaker_open;
    if (round.full && !held && !round.released_unsent) {
      continue;  // a backlog drains batch after batch, not one batch per tick
    }
    DiscardAhead();  // the loop waits: rows claimed ahead go back, due at once
    milliseconds idle = options_.poll_interval;
    if (!held && (round.published > 0 || round.scheduled)) {
      // A paced room's rows come due one per room_min_interval: claim them as they do, as long
      // as rounds deliver (while IM fails, the head rows wait for their retry anyway), also
      // after a claim that only scheduled rows (every room of its window was paced).
      idle = pacing_.IdleAfterDelivery(idle, clock_.SteadyMs());
    }
    // A wake-up ends the idle wait, except while IM or the lease holds the loop back.
    if ((held || round.released_unsent) ? Sleep(idle) : Idle(idle)) break;
  }
  DiscardAhead();  // a stop: the claim made ahead goes back unattempted
  logger_.Info(Line("outbox worker stopped"));
}

DrainResult OutboxWorker::Drain() {
  DrainResult drain;
  drain_ = DrainState{};
  while (true) {
    if (stop_.stop_requested()) {
      drain.stopped = true;
      break;
    }
    const size_t before = drain_.attempted();
    RoundResult round = Round(RoundMode::kDrain);
    ++drain.rounds;
    drain.published += round.published;
    drain.undecodable += round.undecodable;
    // Only attempts count: rows given back as already tried in this run are not failures again.
    drain.failed += round.failed;
    if (round.store_error) {
      drain.store_error = round.error;
      break;
    }
    if (round.claimed == 0 || drain_.attempted() == before) {
      break;
    }
    if (round.rate_limited && Sleep(options_.poll_interval)) {
      drain.stopped = true;
      break;
    }
  }
  drain.unattempted = drain_.unattempted();
  return drain;
}

}  // namespace room_outbox::relay
