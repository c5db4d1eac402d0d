// JSON codec of the event envelope (the room_outbox.envelope column, TIMCustomElem.Data).
#pragma once

#include <string>
#include <string_view>

#include "core/result.h"
#include "room_outbox/envelope.h"

namespace room_outbox {

// Compact JSON with the fields in a fixed order; the same envelope always gives the same bytes.
// Fails (kInvalidArgument) when payload is not a JSON object or a string is not valid UTF-8.
Result<std::string> EncodeEnvelope(const Envelope& envelope);

// Parses and validates: every field present with the right type, event_id/event_type/room_id
// non-empty, payload an object. The error names the field at fault.
Result<Envelope> DecodeEnvelope(std::string_view json);

}  // namespace room_outbox
