// The event envelope: what room_outbox.envelope stores (as JSON) and what Tencent IM receives in
// TIMCustomElem.Data. Clients deduplicate by event_id.
#pragma once

#include <cstdint>
#include <string>

namespace room_outbox {

struct Envelope {
  std::string event_id;     // globally unique; the delivery dedupe key
  std::string event_type;   // e.g. "RoomUserJoined", "RoomGiftSent"
  std::string room_id;      // the room; IM group id is group_id_prefix + room_id
  int64_t room_seq = 0;     // the room's version after the command
  std::string command_id;   // the command's idempotency key
  std::string request_id;   // tracing only
  std::string node_id;      // the room-service node that applied the command
  int64_t occurred_at_ms = 0;  // Unix epoch milliseconds
  std::string payload = "{}";  // a JSON object, as text
};

}  // namespace room_outbox
