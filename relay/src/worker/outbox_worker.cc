#include "worker/outbox_worker.h"

#include <string>
#include <utility>

#include "worker/worker_log.h"

namespace room_outbox::relay {

using std::chrono::milliseconds;

OutboxWorker::OutboxWorker(WorkerOptions options, RelayStore& store, core::Publisher& publisher,
                           LoopClock& clock, LoopSignal& signal, Metrics& metrics, Logger& logger,
                           std::function<void(std::string_view)> on_status, RelayStore* ahead_store)
    : options_(std::move(options)),
      store_(store),
      publisher_(publisher),
      clock_(clock),
      signal_(signal),
      metrics_(metrics),
      logger_(logger),
      on_status_(std::move(on_status)),
      retry_(options_.poll_interval, options_.rate_limited_retry),
      park_(options_.park_permanent_after),
      pacing_(options_.per_room_order() ? options_.room_min_interval : milliseconds(0)),
      waits_(options_.poll_interval, options_.wake_min_interval, clock_, signal_, pacing_),
      claims_(options_, store_, clock_, signal_, pacing_, logger_, ahead_store, &unwritten_),
      sender_(options_, publisher_, clock_, signal_, pacing_, waits_, metrics_, logger_),
      stats_(options_.stats_interval, store_, clock_, metrics_, logger_, options_.node_id) {}

RoundResult OutboxWorker::RunRound() { return Round(RoundMode::kDaemon); }

RoundResult OutboxWorker::Round(RoundMode mode, bool claim_ahead, bool woken) {
  if (signal_.stop_requested()) {
    return RoundResult{};
  }
  if (auto written = WriteUnwritten(); !written) {
    return ClaimFailed(written.error());
  }
  ClaimAhead::Taken taken = claims_.Take(mode, woken);
  core::Result<Claim>& claim = taken.claim;
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
  last_claim_error_.clear();
  RoundResult result;
  ClaimOutcome& claimed = result.claim;
  claimed.claimed_ahead = taken.made_ahead;
  claimed.woken = woken;
  if (claim->next_due_in_ms) {
    claimed.next_due_at = taken.claimed_at + *claim->next_due_in_ms;
    next_due_at_ = claimed.next_due_at;
  } else if (claim->token.empty() && next_due_at_ && *next_due_at_ > taken.claimed_at) {
    // A round that claimed nothing and learnt no due time (a wake-up that found nothing due
    // asks no claim): the one the last claim saw still holds.
    claimed.next_due_at = next_due_at_;
  }
  claimed.scheduled = !claim->paced_rooms.empty();
  const MarkDeps deps{store_, metrics_,     logger_,          clock_,     retry_,
                      park_,  &held_rooms_, options_.node_id, &unwritten_};
  RoundContext round(mode, std::move(*claim), taken.claimed_at + options_.lease.count(),
                     options_.per_room_order(), deps,
                     mode == RoundMode::kDrain ? &drain_ : nullptr);
  Prepare(round, claimed);
  if (claim_ahead) claims_.StartAhead(claimed.full);
  result.sent = sender_.Send(round);
  return Finish(round, result);
}

void OutboxWorker::Prepare(RoundContext& round, ClaimOutcome& claimed) {
  claimed.claimed = round.claim.rows.size();
  metrics_.AddRowsListed(round.claim.rows_listed);
  // A short claim is not the end of a backlog when per-room order left rows out of it; an empty
  // one still waits poll_interval, so a selection that keeps nothing cannot spin.
  claimed.full =
      claimed.claimed >= options_.batch_size || (round.claim.more_due && claimed.claimed > 0);
  round.queues.Load(round.claim.rows, [&](const OutboxRow& row) {
    // Due again within one --once run: left for a later run; its room's later rows wait too.
    return round.drain != nullptr && round.drain->Attempted(row.id);
  });
  for (const UndecodableRow& bad : round.queues.undecodable()) {
    round.NoteAttempt(*bad.row);
    round.marks.Undecodable(bad);
  }
  for (const HeldRoom& held : round.queues.held_rooms()) {
    round.marks.HeldBack(held.room_id, "", held.rows);
  }
  pacing_.Forget(clock_.SteadyMs());
}

RoundResult OutboxWorker::Finish(RoundContext& round, RoundResult& result) {
  const std::vector<int64_t>& released = round.queues.released();
  result.marks = round.marks.Close(released);
  if (round.drain != nullptr) {
    for (int64_t id : released) round.drain->NoteReleased(id);
  }
  result.error = round.marks.decode_error();
  if (round.marks.store_error()) {
    result.error = *round.marks.store_error();
    result.store_error = true;
  }
  CheckReleasedWhole(round, result);
  round.marks.Summarize(round.queues.rooms_held(), result.marks.released);
  result.breaker_open = publisher_.breaker_open();
  metrics_.SetImBreakerOpen(result.breaker_open);
  metrics_.SetResultsUnwritten(static_cast<int64_t>(unwritten_.rows()));
  metrics_.AddRound(result.error.has_value());
  stats_.AfterRound(round.queues.rooms_held());
  LogRound(result);
  return result;
}

// The results kept since the database went away come first: the rows IM took are marked (never
// sent again), the rows held but not sent given back (due at once), before anything is claimed.
core::Result<void> OutboxWorker::WriteUnwritten() {
  if (unwritten_.empty()) return {};
  auto written = unwritten_.WriteTo(store_, logger_, options_.node_id);
  metrics_.SetResultsUnwritten(static_cast<int64_t>(unwritten_.rows()));
  return written;
}

RoundResult OutboxWorker::ClaimFailed(const Error& error) {
  // A failure that repeats round after round (the database away or read-only) is logged at
  // error once, its repeats at debug, until a claim works or the error changes.
  const bool repeated = error.message == last_claim_error_;
  last_claim_error_ = error.message;
  logger_.Log(repeated ? spdlog::level::debug : spdlog::level::err,
              Line("outbox claim failed").Add("error", error.message));
  metrics_.AddRound(true);
  RoundResult result;
  result.error = error;
  result.store_error = true;
  return result;
}

void OutboxWorker::CheckReleasedWhole(const RoundContext& round, RoundResult& result) {
  if (!result.sent.lease_short || round.attempted > 0) {
    return;
  }
  // Every row given back unsent: a claim that cannot hold one message would otherwise repeat
  // forever without anyone noticing.
  result.released_unsent = true;
  const std::string why = "claim of " + std::to_string(result.claim.claimed) +
                          " rows given back unsent: the lease left less than publish_timeout (" +
                          std::to_string(options_.publish_timeout.count()) +
                          "ms) + the mark margin (" + std::to_string(kMarkMargin.count()) +
                          "ms) for one message";
  logger_.Warn(Line("claim given back whole without an attempt: a failed round")
                   .Add("rows", static_cast<uint64_t>(result.claim.claimed))
                   .Add("lease_ms", static_cast<int64_t>(options_.lease.count()))
                   .Add("error", why));
  if (!result.error) {
    result.error = Error{ErrorCode::kDeadlineExceeded, why};
  }
}

void OutboxWorker::LogRound(const RoundResult& result) {
  logger_.Debug(Line("outbox round")
                    .Add("claimed", static_cast<uint64_t>(result.claim.claimed))
                    .Add("published", static_cast<uint64_t>(result.marks.published))
                    .Add("skipped", static_cast<uint64_t>(result.marks.skipped))
                    .Add("failed", static_cast<uint64_t>(result.marks.failed))
                    .Add("expired", static_cast<uint64_t>(result.marks.expired))
                    .Add("released", static_cast<uint64_t>(result.marks.released))
                    .Add("waves", static_cast<uint64_t>(result.sent.waves))
                    .Add("claimed_ahead", result.claim.claimed_ahead)
                    .Add("woken", result.claim.woken));
}

LogLine OutboxWorker::Line(std::string_view message) const {
  return WorkerLine(options_.node_id, message);
}

}  // namespace room_outbox::relay
