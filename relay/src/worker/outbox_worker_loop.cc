// OutboxWorker's loops: Run (the daemon: rounds, the wait after each, the error back-off) and
// Drain (--once).
#include <algorithm>
#include <utility>

#include "worker/outbox_worker.h"

namespace room_outbox::relay {
namespace {

using std::chrono::milliseconds;

}  // namespace

void OutboxWorker::Run() {
  LogStarted();
  milliseconds backoff = options_.poll_interval;
  const milliseconds max_backoff = std::max(options_.max_error_backoff, options_.poll_interval);
  uint64_t consecutive_errors = 0;
  bool woken = false;  // a wake-up ended the wait before the next round
  while (!signal_.stop_requested()) {
    waits_.RoundStarted();
    RoundResult round = Round(RoundMode::kDaemon, true, woken);
    waits_.RoundEnded(woken, round.claim.claimed > 0);
    woken = false;
    metrics_.SetDbUp(!round.store_error);
    if (round.store_error) {
      claims_.DiscardAhead();
      ++consecutive_errors;
      if (consecutive_errors == 1 && on_status_) {
        on_status_("database error, retrying: " + round.error->message);
      }
      LogBackoff(consecutive_errors, backoff);
      // A fixed back-off, not derived from a clock reading: no clamp to the poll interval.
      if (clock_.SleepFor(backoff, signal_)) break;
      backoff = std::min(backoff * 2, max_backoff);
      continue;
    }
    if (consecutive_errors > 0) {
      logger_.Info(Line("database reachable again").Add("after_errors", consecutive_errors));
      if (on_status_) on_status_("running");
      consecutive_errors = 0;
      backoff = options_.poll_interval;
    }
    if (WaitAfterRound(round, woken)) break;
  }
  claims_.DiscardAhead();  // a stop: the claim made ahead goes back unattempted
  logger_.Info(Line("outbox worker stopped"));
}

bool OutboxWorker::WaitAfterRound(const RoundResult& round, bool& woken) {
  // While the breaker is open every round gives its claim back: wait poll_interval between
  // them; the breaker's probe goes out with the first send after its cooldown.
  const bool held = round.sent.rate_limited || round.breaker_open;
  if (round.claim.full && !held && !round.released_unsent) {
    return false;  // a backlog drains batch after batch, not one batch per tick
  }
  if (round.claim.claimed_ahead && !held && !round.released_unsent) {
    // The claim was made while the round before was sent: that round's rooms were in flight, so
    // their rows that came due meanwhile (a later command's, rows a hook released and woke the
    // relay for) were left out of it, and the wake-up was taken. Claim once more before idling.
    return false;
  }
  claims_.DiscardAhead();  // the loop waits: rows claimed ahead go back, due at once
  milliseconds idle = options_.poll_interval;
  if (!held && (round.marks.published + round.marks.skipped > 0 || round.claim.scheduled)) {
    // A paced room's rows come due one per room_min_interval: claim them as they do, as long
    // as rounds deliver (while IM fails, the head rows wait for their retry anyway), also
    // after a claim that only scheduled rows (every room of its window was paced).
    idle = pacing_.IdleAfterDelivery(idle, clock_.SteadyMs());
  }
  // A wake-up ends the idle wait, except while IM or the lease holds the loop back.
  if (held || round.released_unsent) return waits_.Sleep(idle);
  return waits_.IdleUntilWoken(waits_.UntilNextDue(round.claim.next_due_at, idle), woken);
}

DrainResult OutboxWorker::Drain() {
  DrainResult drain;
  drain_ = DrainState{};
  while (true) {
    if (signal_.stop_requested()) {
      drain.stopped = true;
      break;
    }
    const size_t before = drain_.attempted();
    RoundResult round = Round(RoundMode::kDrain);
    ++drain.rounds;
    drain.published += round.marks.published;
    drain.skipped += round.marks.skipped;
    drain.undecodable += round.marks.undecodable;
    // Only attempts count: rows given back as already tried in this run are not failures again.
    drain.failed += round.marks.failed;
    if (round.store_error) {
      drain.store_error = round.error;
      break;
    }
    if (round.claim.claimed == 0 || drain_.attempted() == before) {
      break;
    }
    if (round.sent.rate_limited && waits_.Sleep(options_.poll_interval)) {
      drain.stopped = true;
      break;
    }
  }
  drain.unattempted = drain_.unattempted();
  return drain;
}

void OutboxWorker::LogBackoff(uint64_t consecutive_errors, milliseconds backoff) {
  LogLine line = Line("database error: backing off");
  line.Add("consecutive_errors", consecutive_errors)
      .Add("backoff_ms", static_cast<int64_t>(backoff.count()));
  // At warn for the 1st, 2nd, 4th, 8th, ... error of a run: a long outage at the capped back-off
  // writes a few lines, not one every max_error_backoff.
  if ((consecutive_errors & (consecutive_errors - 1)) == 0) {
    logger_.Warn(line);
  } else {
    logger_.Debug(line);
  }
}

void OutboxWorker::LogStarted() {
  logger_.Info(
      Line("outbox worker started")
          .Add("poll_interval_ms", static_cast<int64_t>(options_.poll_interval.count()))
          .Add("batch_size", static_cast<uint64_t>(options_.batch_size))
          .Add("publish_timeout_ms", static_cast<int64_t>(options_.publish_timeout.count()))
          .Add("max_in_flight", static_cast<uint64_t>(options_.max_in_flight))
          .Add("wake_min_interval_ms", static_cast<int64_t>(options_.wake_min_interval.count()))
          .Add("ordering", options_.per_room_order() ? "per_room" : "none"));
}

}  // namespace room_outbox::relay
