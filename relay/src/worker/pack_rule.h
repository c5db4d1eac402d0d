// PackRule: which rows go out together as one message ([tencent_im] pack_max_events). A pack is
// the front row of a room's queue and the rows after it, consecutive in the room's order, while:
//  - the pack has fewer events than its limit: the front row's pack_size when it headed a pack
//    whose send failed without a definite drop (so the resend is the same pack, byte for byte,
//    and IM can dedupe it), else pack_max_events;
//  - the next row is one to send (a type the publisher sends, not expired: the caller's check,
//    made before Take);
//  - its envelope text keeps the RoomEventBatch body within max_body_bytes (PackBodySize).
// A pack of one event is sent in the single form.
//
// A recorded pack is resent whole when the round holds its rows: the claim gives a head's recorded
// pack to one claim whole (claim_plan.h), whatever pack_max_events is now. When the round holds
// fewer of them (a batch smaller than the pack, a row another transaction held locked, the pack's
// last rows parked by an operator, a row that expired since), the pack holds what the round has
// and is sent at once: a smaller pack has another Random, so if the first send got through the
// events both carry may reach the room twice (clients drop repeats by event_id). The room is never
// held back waiting for rows that may not come back; the sender logs a warning line for such a
// send (RoomSender::PackFrom).
#pragma once

#include <cstddef>
#include <string_view>

#include "core/tencent/im_request.h"
#include "worker/room_queues.h"

namespace room_outbox::relay {

class PackRule {
 public:
  PackRule(size_t pack_max_events, size_t max_body_bytes, std::string_view group_id_prefix)
      : pack_max_events_(pack_max_events),
        max_body_bytes_(max_body_bytes),
        group_id_prefix_(group_id_prefix) {}

  // How many events a pack headed by `front` may hold at most.
  size_t LimitFor(const QueuedRow& front) const;

  // One pack being built, from its front row on.
  class Pack {
   public:
    Pack(const PackRule& rule, const QueuedRow& front);
    // True (and counted in) when `next`, the row after the pack's last, fits.
    bool Take(const QueuedRow& next);

   private:
    const PackRule& rule_;
    const size_t limit_;
    core::PackBodySize size_;
  };

 private:
  size_t pack_max_events_;
  size_t max_body_bytes_;
  std::string_view group_id_prefix_;
};

}  // namespace room_outbox::relay
