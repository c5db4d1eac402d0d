// How the hook's sync publish (inline and background) groups one command's pending events into
// messages ([tencent_im] pack_max_events): consecutive events in room order, at most
// pack_max_events per message, a message ending before the event that would take its body past
// max_body_bytes (core::PackBodySize, never under the real body). A single event is always a
// message of its own (the commit checked its single-form body against max_body_bytes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace room_outbox::internal {

// The limits of a pack, taken from the Hook's (normalised) TencentImOptions.
struct PackLimits {
  size_t max_events = 1;        // pack_max_events; 0 or 1: one event per message
  size_t max_body_bytes = 0;    // max_body_bytes
  std::string_view group_id_prefix;
};

// One pending event of the command, in room order.
struct PackCandidate {
  std::string_view event_id;
  std::string_view envelope_json;  // the row's stored envelope text
};

// A pack (2+ rows) whose send failed without IM definitely dropping it (outcome not
// definite_drop): the hand-back records `events` as room_outbox.pack_size on its first row, so the
// next send of that row is the same pack again. events 0: none.
struct FailedPack {
  int64_t first_row_id = 0;
  size_t events = 0;
};

// The number of events of each message, in order; they add up to events.size().
std::vector<size_t> SplitIntoPacks(std::span<const PackCandidate> events, std::string_view room_id,
                                   const PackLimits& limits);

}  // namespace room_outbox::internal
