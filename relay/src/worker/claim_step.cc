#include "worker/claim_step.h"

#include <utility>
#include <vector>

#include "worker/worker_log.h"

namespace room_outbox::relay {

ClaimStep::ClaimStep(const WorkerOptions& options, RelayStore& store, LoopClock& clock,
                     LoopSignal& signal, RoomPacing& pacing, Logger& logger,
                     RelayStore* ahead_store, UnwrittenResults* unwritten)
    : options_(options),
      store_(store),
      clock_(clock),
      signal_(signal),
      pacing_(pacing),
      logger_(logger),
      unwritten_(unwritten) {
  if (ahead_store != nullptr) ahead_ = std::make_unique<ClaimAhead>(*ahead_store, clock_);
}

ClaimOptions ClaimStep::Options(RoundMode mode) const {
  ClaimOptions o;
  o.limit = options_.batch_size;
  o.lease_ms = options_.lease.count();
  o.rooms.per_room_order = options_.per_room_order();
  o.rooms.pack_events = options_.pack_max_events;
  if (mode == RoundMode::kDaemon) {
    // A round sends a paced room at most one poll_interval's worth of rows; its other due rows
    // are scheduled after them, and the next claim takes other rooms' rows meanwhile. (--once
    // keeps whole runs: it ends when nothing is due, so nothing may be scheduled for later.)
    pacing_.CutRuns(o, options_.poll_interval);
    if (o.rooms.run_cut_rows > 0) {
      o.rooms.skip_event_types = {options_.skip_event_types.begin(),
                                  options_.skip_event_types.end()};
    }
    // Paced rooms (sent to less than room_min_interval ago): their rows wait in the database,
    // not in a round.
    pacing_.AddPaced(o, clock_.SteadyMs());
  }
  return o;
}

ClaimAhead::Taken ClaimStep::Take(RoundMode mode, bool woken) {
  const ClaimOptions options = Options(mode);
  if (ahead_ && ahead_->pending()) {
    ClaimAhead::Taken taken = std::move(*ahead_->Take());  // made while the last round was sent
    // An empty one says only that the last round's rooms were in flight: claim again now.
    if (!taken.claim || !taken.claim->rows.empty()) {
      if (taken.claim) NotePacedRooms(*taken.claim, taken.claimed_at);
      return taken;
    }
  }
  // The lease runs from just before the call: a slow claim leaves less of it.
  const int64_t claimed_at = clock_.SteadyMs();
  // This claim sees every row committed before a wake-up taken here; a later one stays pending.
  (void)signal_.TakeWake();
  // A datagram carries nothing: a round it started first asks whether a row is due (one read),
  // so wake-ups that bring no rows never cost a claim's transaction.
  if (woken && NothingDue()) {
    return ClaimAhead::Taken{Claim{}, claimed_at, false};
  }
  ClaimAhead::Taken taken{store_.ClaimDue(options), claimed_at, false};
  if (taken.claim) NotePacedRooms(*taken.claim, claimed_at);
  return taken;
}

bool ClaimStep::NothingDue() {
  auto due = store_.AnyDue(options_.per_room_order());
  if (!due) {
    logger_.Debug(WorkerLine(options_.node_id, "due check failed; claiming")
                      .Add("error", due.error().message));
    return false;
  }
  return !*due;
}

void ClaimStep::StartAhead(bool full) {
  // Only a full claim says more rows are due; a stop claims nothing new. The rooms this round
  // sends to are leased on the room schedule until their marks, so the claim made ahead takes
  // other rooms, and a pacing relay overlaps its claims with its sends too.
  if (!ahead_ || !full || signal_.stop_requested()) return;
  (void)signal_.TakeWake();  // as in Take: the claim made ahead sees what was committed before
  ahead_->Start(Options(RoundMode::kDaemon));
}

void ClaimStep::DiscardAhead() {
  if (!ahead_ || !ahead_->pending()) return;
  ClaimAhead::Taken taken = std::move(*ahead_->Take());
  if (!taken.claim) {
    // Nothing was leased; the next round claims (and meets the database's state) itself.
    logger_.Warn(WorkerLine(options_.node_id, "claim made ahead failed")
                     .Add("error", taken.claim.error().message));
    return;
  }
  if (taken.claim->rows.empty()) return;
  std::vector<int64_t> ids;
  ids.reserve(taken.claim->rows.size());
  for (const OutboxRow& row : taken.claim->rows) ids.push_back(row.id);
  auto released = store_.Release(taken.claim->token, ids);
  if (!released) {
    if (unwritten_ != nullptr) {
      unwritten_->KeepIds(UnwrittenResults::Kind::kReleased, taken.claim->token, ids);
    }
    logger_.Error(WorkerLine(options_.node_id,
                             unwritten_ != nullptr
                                 ? "claim made ahead not given back yet: given back when the "
                                   "database answers again"
                                 : "claim made ahead not given back: its rows are due when its "
                                   "lease ends")
                      .Add("rows", static_cast<uint64_t>(ids.size()))
                      .Add("error", released.error().message));
    return;
  }
  logger_.Debug(WorkerLine(options_.node_id, "claim made ahead given back unattempted")
                    .Add("rows", static_cast<uint64_t>(*released)));
}

void ClaimStep::NotePacedRooms(const Claim& claim, int64_t claimed_at) {
  for (const PacedRoom& room : claim.paced_rooms) {
    logger_.Debug(
        WorkerLine(options_.node_id, "room paced: its later rows are scheduled after this round")
            .Add("room_id", room.room_id)
            .Add("rows_scheduled", room.rows_scheduled));
    // How long after the claim the room's last scheduled slot comes, on this process's clock.
    pacing_.Scheduled(claimed_at, room.paced_for_ms);
  }
}

}  // namespace room_outbox::relay
