// RoundContext: one claim on its way through a round: its rows queued per room, its marks, and
// the attempts made. Built by OutboxWorker, passed to RoomSender.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>

#include "store/relay_store.h"
#include "worker/drain_state.h"
#include "worker/room_queues.h"
#include "worker/round_marks.h"
#include "worker/round_result.h"

namespace room_outbox::relay {

// The queues point into `claim`: it never moves.
struct RoundContext {
  // `drain` (the --once run's state) is set in RoundMode::kDrain only.
  RoundContext(RoundMode mode_in, Claim claim_in, int64_t lease_end_steady, bool per_room_order,
               const MarkDeps& deps, DrainState* drain_in)
      : mode(mode_in),
        claim(std::move(claim_in)),
        lease_end(lease_end_steady),
        queues(per_room_order),
        marks(deps, claim.token),
        drain(drain_in) {}

  // `row` was attempted in this round (sent, delivered or undecodable).
  void NoteAttempt(const OutboxRow& row) {
    ++attempted;
    if (drain != nullptr) drain->NoteAttempted(row.id);
  }

  const RoundMode mode;
  const Claim claim;
  const int64_t lease_end;  // monotonic
  RoomQueues queues;
  RoundMarks marks;
  DrainState* const drain;
  size_t attempted = 0;
};

}  // namespace room_outbox::relay
