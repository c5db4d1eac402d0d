// JSON codec of the event envelope (the room_outbox.envelope column, TIMCustomElem.Data).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/json_writer.h"
#include "core/result.h"
#include "room_outbox/envelope.h"

namespace room_outbox::core {

// An envelope's fields as views, to encode without copying them into an Envelope.
struct EnvelopeFields {
  std::string_view event_id;
  std::string_view event_type;
  std::string_view room_id;
  int64_t room_seq = 0;
  std::string_view command_id;
  std::string_view request_id;
  std::string_view node_id;
  int64_t occurred_at_ms = 0;
  std::string_view payload;  // a JSON object, as text
};

// Views of `envelope`'s fields; valid while `envelope` is.
EnvelopeFields FieldsOf(const Envelope& envelope);

// Compact JSON with the fields in a fixed order; the same envelope always gives the same bytes
// (the payload is parsed and written back as nlohmann::json::dump() writes it: keys sorted,
// no whitespace). Fails (kInvalidArgument) when payload is not a JSON object or a string is not
// valid UTF-8.
Result<std::string> EncodeEnvelope(const Envelope& envelope);

// The same encoding written into `writer` (cleared first), whose buffer is reused: what the
// commit path and the IM body use. On failure the writer's text is unusable.
Status WriteEnvelope(JsonWriter& writer, const EnvelopeFields& envelope);

// Parses and validates: every field present with the right type, event_id/event_type/room_id
// non-empty, payload an object. The error names the field at fault.
Result<Envelope> DecodeEnvelope(std::string_view json);

// The same, and also writes EncodeEnvelope(the result) into `encoded` (cleared first) from the
// parsed document, without parsing the payload a second time. `encoded` is left empty when that
// encoding fails (it can outgrow kMaxEnvelopeBytes where `json` did not, e.g. through number
// formats): EncodeEnvelope(the result) then fails the same way.
Result<Envelope> DecodeEnvelope(std::string_view json, JsonWriter& encoded);

}  // namespace room_outbox::core
