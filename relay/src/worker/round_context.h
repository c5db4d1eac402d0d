// OutboxWorker::RoundContext: one claim on its way through a round. Private to the worker's own
// files (outbox_worker*.cc).
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>

#include "worker/outbox_worker.h"

namespace room_outbox::relay {

// The queues point into `claim`: it never moves.
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

}  // namespace room_outbox::relay
