#include "worker/outbox_worker.h"

#include <algorithm>
#include <utility>

#include "worker/result_writer.h"
#include "worker/round_context.h"

namespace room_outbox::relay {
namespace {

using std::chrono::milliseconds;

}  // namespace

OutboxWorker::OutboxWorker(WorkerOptions options, RelayStore& store, core::Publisher& publisher,
                           LoopClock& clock, LoopSignal& stop, Metrics& metrics, Logger& logger,
                           std::function<void(std::string_view)> on_status, RelayStore* ahead_store)
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
      pacing_(options_.per_room_order() ? options_.room_min_interval : milliseconds(0)),
      wake_gap_(options_.wake_min_interval) {
  if (ahead_store != nullptr) ahead_ = std::make_unique<ClaimAhead>(*ahead_store, clock_);
}

RoundResult OutboxWorker::RunRound() { return Round(RoundMode::kDaemon); }

RoundResult OutboxWorker::Round(RoundMode mode, bool claim_ahead, bool woken) {
  if (stop_.stop_requested()) {
    return RoundResult{};
  }
  ClaimAhead::Taken taken = TakeClaim(MakeClaimOptions(mode), woken);
  core::Result<Claim>& claim = taken.claim;
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
  std::optional<int64_t> next_due_at;
  if (claim->next_due_in_ms) next_due_at = claimed_at + *claim->next_due_in_ms;
  RoundContext round(mode, std::move(*claim), claimed_at + options_.lease.count(), *this);
  round.result.claimed_ahead = taken.made_ahead;
  round.result.woken = woken;
  round.result.next_due_at = next_due_at;
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
                    .Add("claimed_ahead", result.claimed_ahead)
                    .Add("woken", result.woken));
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

LogLine OutboxWorker::Line(std::string_view message) const {
  LogLine line(message);
  line.Add("worker", "room_outbox").Add("node_id", options_.node_id);
  return line;
}

}  // namespace room_outbox::relay
