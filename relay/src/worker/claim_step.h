// ClaimStep: what a round claims. It builds the claim's options (batch_size, lease,
// per_room_order; for the daemon the run cut and the paced rooms, RoomPacing), takes the pending
// wake-up just before it claims, asks RelayStore::AnyDue first when a wake-up started the round
// (so a wake-up that brings no rows never costs a claim's transaction), and makes the next claim
// ahead on the second store when there is one (ClaimAhead, see outbox_worker.h "Claim ahead").
//
// The lease of a claim is measured on the monotonic clock from just before its call
// (Taken::claimed_at). A claim made ahead that nobody will send is given back unattempted on the
// first store by DiscardAhead.
//
// Thread-safety: one thread (the worker's); the claim made ahead runs on ClaimAhead's thread.
#pragma once

#include <memory>
#include <string>

#include "store/relay_store.h"
#include "telemetry/log_line.h"
#include "worker/claim_ahead.h"
#include "worker/loop_clock.h"
#include "worker/room_pacing.h"
#include "worker/round_result.h"
#include "worker/unwritten_results.h"
#include "worker/worker_options.h"

namespace room_outbox::relay {

class ClaimStep {
 public:
  // Every reference must outlive the step. `ahead_store`, when set, is a second store used by
  // this step alone for the claims made ahead. `unwritten`, when set, keeps the release of a
  // claim made ahead that the store failed to give back (UnwrittenResults).
  ClaimStep(const WorkerOptions& options, RelayStore& store, LoopClock& clock, LoopSignal& signal,
            RoomPacing& pacing, Logger& logger, RelayStore* ahead_store = nullptr,
            UnwrittenResults* unwritten = nullptr);

  // The options of a claim in `mode`.
  ClaimOptions Options(RoundMode mode) const;
  // The round's claim: the claim made ahead when one is pending and not empty, else a claim
  // made now (an empty one without a store call when `woken` and AnyDue finds nothing due).
  // The claim's rooms that were paced are noted in RoomPacing and logged.
  ClaimAhead::Taken Take(RoundMode mode, bool woken);
  // Starts the next claim ahead when there is a second store, the claim `full` and no stop
  // requested.
  void StartAhead(bool full);
  // Gives back a claim made ahead and not taken (unattempted, on the first store).
  void DiscardAhead();

 private:
  bool NothingDue();
  void NotePacedRooms(const Claim& claim, int64_t claimed_at);

  const WorkerOptions& options_;
  RelayStore& store_;
  LoopClock& clock_;
  LoopSignal& signal_;
  RoomPacing& pacing_;
  Logger& logger_;
  UnwrittenResults* unwritten_;
  std::unique_ptr<ClaimAhead> ahead_;  // set when a second store was given
};

}  // namespace room_outbox::relay
