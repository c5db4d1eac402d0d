// RoomRules: how a claim treats each room's rows. One struct, made by the worker's ClaimStep and
// passed down unchanged: ClaimOptions::rooms -> PlanOptions::rooms -> the claim plan.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <string_view>

#include "room_outbox/options.h"

namespace room_outbox::relay {

struct RoomRules {
  // Per-room order: a row is claimed only together with every earlier pending row of its room
  // (so a room's head row is never overtaken, even by another relay).
  bool per_room_order = true;
  // Per-room order only, with room_min_interval_ms > 0. A room's run is cut after this many rows
  // (0: no cut), and the room's other rows the claim read (and holds locked) are scheduled one
  // per room_min_interval_ms after the run (next_attempt_at_ms), so that later claims pass over
  // them and take other rooms' rows until each can be sent. This keeps one busy room's
  // room_min_interval from holding every other room's rows behind it.
  size_t run_cut_rows = 0;
  int64_t room_min_interval_ms = 0;
  // [tencent_im] pack_max_events: the sent rows one message carries at most. Pacing counts
  // messages: a run is cut after run_cut_rows messages' worth of sent rows (run_cut_rows x
  // pack_events), the rows after it get one interval slot per pack_events sent rows, and with
  // many rooms due a room's first share is one message's worth. A room whose head recorded a pack
  // (room_outbox.pack_size: a pack whose send failed without a definite drop) has that pack as its
  // first message instead (FirstMessageRows), so the claim holds it whole and the resend is the
  // same pack, byte for byte (PackRule).
  size_t pack_events = 1;
  // [tencent_im] skip_event_types, delivered without a send: they neither count toward
  // run_cut_rows nor take an interval slot.
  std::set<std::string, std::less<>> skip_event_types;

  // False for a type of skip_event_types.
  bool Sends(std::string_view event_type) const { return !skip_event_types.contains(event_type); }
  // The cut in force, in sent rows: run_cut_rows messages of pack_events rows, or 0 when there is
  // no interval to schedule by.
  size_t CutRows() const { return room_min_interval_ms > 0 ? run_cut_rows * PackEvents() : 0; }
  // The cut for a room whose first message holds `first_rows` sent rows: that message counts as
  // one of the run_cut_rows messages. 0 when there is no cut.
  size_t CutRows(size_t first_rows) const {
    const size_t cut = CutRows();
    return cut == 0 ? 0 : cut - PackEvents() + first_rows;
  }
  size_t PackEvents() const { return pack_events > 0 ? pack_events : 1; }
  // The rows of a room's first message: its head's recorded pack (head_pack_size > 0) at most
  // kMaxPackEvents, else PackEvents().
  size_t FirstMessageRows(uint32_t head_pack_size) const {
    if (head_pack_size == 0) return PackEvents();
    return std::min<size_t>(head_pack_size, kMaxPackEvents);
  }
};

}  // namespace room_outbox::relay
