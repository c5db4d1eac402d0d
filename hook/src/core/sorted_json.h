// WriteSortedJson: JSON text written as nlohmann::json::dump() would write it after parsing it
// (compact, keys sorted, numbers and strings in dump()'s formats), straight from the parser's
// events, without building the document, when every object of the text already has its keys in
// ascending order (as dump() itself writes them). The commit path writes every event's payload
// this way; a text with keys in another order, duplicate keys or a syntax error is left to the
// caller's parse and dump().
#pragma once

#include <string_view>

#include "core/json_writer.h"

namespace room_outbox {

// Appends `text` to `writer` as dump() of its parse and returns true when `text` is one JSON
// object whose objects (at every depth) all have strictly ascending keys (byte order, as
// std::string compares). Otherwise returns false, and what was appended is unusable: the caller
// starts its text again. The caller bounds the depth beforehand (CheckJsonLimits).
bool WriteSortedJson(JsonWriter& writer, std::string_view text);

}  // namespace room_outbox
