// The events one send_group_msg message carries, as the IM stand-in reads them from the
// TIMCustomElem's MsgContent (docs/relay.md, "The request body" and "Packed events"):
//   single form:     Data = an envelope, Desc = its event_type, Ext = its event_id;
//   RoomEventBatch:  Desc = "RoomEventBatch", Data = {"events":[<envelope>,...]} with 2 to
//                    kMaxPackEvents envelopes of one room in room order (room_seq never
//                    decreasing), Ext = the first event's event_id.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace room_outbox::testing {

// One event of a message.
struct FakeImEvent {
  std::string event_id;
  std::string event_type;
  std::string room_id;
  int64_t room_seq = 0;
};

// The message's events in order into `events` (cleared first); on a malformed message, why
// (naming the field and what is wrong) and `events` is left empty.
std::optional<std::string> ParseMessageEvents(const std::string& data, const std::string& desc,
                                              const std::string& ext,
                                              std::vector<FakeImEvent>* events);

// The event ids of `events`, in order.
std::vector<std::string> EventIds(const std::vector<FakeImEvent>& events);

}  // namespace room_outbox::testing
