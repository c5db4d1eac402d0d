// ReadEnvelopeEvents: an envelope read straight from the parser's events, without building the
// document, for the common case of a well-formed envelope as the hook writes it (every field once,
// of its type, the payload's keys in ascending order). Anything else is left to DecodeEnvelope's
// full parse, which names what is wrong; the two give the same Envelope wherever this one answers.
#pragma once

#include <optional>
#include <string_view>

#include "core/json_writer.h"
#include "room_outbox/envelope.h"

namespace room_outbox::core {

// The envelope of `text`, its payload as dump() of the payload's parse, or nullopt when `text` is
// not such an envelope or is nested deeper than kMaxJsonDepth (the caller then runs the full parse,
// which reports it). `scratch` receives the payload's text on the way; its text is unusable
// afterwards. The caller bounds the size beforehand (CheckJsonSize).
std::optional<Envelope> ReadEnvelopeEvents(std::string_view text, JsonWriter& scratch);

}  // namespace room_outbox::core
