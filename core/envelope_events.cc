#include "core/envelope_events.h"

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>

#include "core/input_limits.h"
#include "core/sorted_json.h"

namespace room_outbox::core {
namespace {

using nlohmann::json;

enum Field : uint8_t {
  kEventId,
  kEventType,
  kRoomId,
  kRoomSeq,
  kCommandId,
  kRequestId,
  kNodeId,
  kOccurredAtMs,
  kPayload,
  kFieldCount,
};

constexpr std::string_view kFieldNames[kFieldCount] = {"event_id", "event_type",     "room_id",
                                                       "room_seq", "command_id",     "request_id",
                                                       "node_id",  "occurred_at_ms", "payload"};

constexpr uint32_t kAllFields = (1u << kFieldCount) - 1;

// The envelope object's events: its fields taken as they come, the payload object's events
// handed to SortedJsonEvents. Returns false (which stops the parse) on anything the full parse
// must judge: an unknown or repeated field, a value of another type, an empty identifier.
class EnvelopeEvents {
 public:
  EnvelopeEvents(Envelope& out, JsonWriter& payload) : out_(out), payload_(payload) {}

  bool null() {
    return inside_ && Forward([](SortedJsonEvents& p) { return p.null(); });
  }
  bool boolean(bool v) {
    return inside_ && Forward([v](SortedJsonEvents& p) { return p.boolean(v); });
  }
  bool number_integer(json::number_integer_t v) {
    return inside_ ? Forward([v](SortedJsonEvents& p) { return p.number_integer(v); }) : Integer(v);
  }
  bool number_unsigned(json::number_unsigned_t v) {
    if (inside_) {
      return Forward([v](SortedJsonEvents& p) { return p.number_unsigned(v); });
    }
    return v <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) &&
           Integer(static_cast<int64_t>(v));
  }
  bool number_float(json::number_float_t v, const json::string_t& raw) {
    return inside_ && Forward([&](SortedJsonEvents& p) { return p.number_float(v, raw); });
  }
  bool string(json::string_t& v) {
    return inside_ ? Forward([&](SortedJsonEvents& p) { return p.string(v); }) : String(v);
  }
  bool binary(json::binary_t& /*value*/) { return false; }
  bool start_object(std::size_t n) {
    if (inside_) {
      return Deeper() && Forward([n](SortedJsonEvents& p) { return p.start_object(n); });
    }
    if (!opened_) {
      opened_ = true;
      return true;
    }
    if (current_ != kPayload) {
      return false;
    }
    inside_ = true;
    return Deeper() && payload_events_.start_object(n);
  }
  bool key(json::string_t& k) {
    return inside_ ? Forward([&](SortedJsonEvents& p) { return p.key(k); }) : Key(k);
  }
  bool end_object() {
    if (inside_) {
      --depth_;
      return Forward([](SortedJsonEvents& p) { return p.end_object(); });
    }
    closed_ = true;
    return true;
  }
  bool start_array(std::size_t n) {
    return inside_ && Deeper() && Forward([n](SortedJsonEvents& p) { return p.start_array(n); });
  }
  bool end_array() {
    --depth_;
    return inside_ && Forward([](SortedJsonEvents& p) { return p.end_array(); });
  }
  bool parse_error(std::size_t /*position*/, const std::string& /*last_token*/,
                   const nlohmann::detail::exception& /*error*/) {
    return false;
  }

  bool complete() const { return closed_ && seen_ == kAllFields; }

 private:
  template <class Event>
  bool Forward(Event event) {
    const bool ok = event(payload_events_);
    if (ok && payload_events_.done()) {
      inside_ = false;
      Mark(kPayload);
    }
    return ok;
  }

  // One level deeper inside the payload; false past the envelope's depth limit (the envelope
  // itself is the first level), which the full parse then reports.
  bool Deeper() { return ++depth_ < kMaxJsonDepth; }

  bool Key(std::string_view k) {
    for (uint8_t f = 0; f < kFieldCount; ++f) {
      if (kFieldNames[f] == k) {
        current_ = static_cast<Field>(f);
        return (seen_ & (1u << f)) == 0;
      }
    }
    return false;
  }

  void Mark(Field f) { seen_ |= 1u << f; }

  bool Integer(int64_t v) {
    if (current_ != kRoomSeq && current_ != kOccurredAtMs) {
      return false;
    }
    (current_ == kRoomSeq ? out_.room_seq : out_.occurred_at_ms) = v;
    Mark(current_);
    return true;
  }

  bool String(std::string& v) {
    std::string* field = nullptr;
    switch (current_) {
      case kEventId:
        field = &out_.event_id;
        break;
      case kEventType:
        field = &out_.event_type;
        break;
      case kRoomId:
        field = &out_.room_id;
        break;
      case kCommandId:
        field = &out_.command_id;
        break;
      case kRequestId:
        field = &out_.request_id;
        break;
      case kNodeId:
        field = &out_.node_id;
        break;
      default:
        return false;
    }
    const bool required = current_ == kEventId || current_ == kEventType || current_ == kRoomId;
    if (required && v.empty()) {
      return false;
    }
    *field = std::move(v);
    Mark(current_);
    return true;
  }

  Envelope& out_;
  JsonWriter& payload_;
  SortedJsonEvents payload_events_{payload_};
  Field current_ = kFieldCount;
  uint32_t seen_ = 0;
  size_t depth_ = 0;  // the payload's levels open now
  bool opened_ = false;
  bool inside_ = false;  // between the payload object's braces
  bool closed_ = false;
};

}  // namespace

std::optional<Envelope> ReadEnvelopeEvents(std::string_view text, JsonWriter& scratch) {
  scratch.Clear();
  Envelope out;
  EnvelopeEvents events(out, scratch);
  try {
    if (!json::sax_parse(text, &events, json::input_format_t::json, /*strict=*/true,
                         /*ignore_comments=*/false) ||
        !events.complete()) {
      return std::nullopt;
    }
  } catch (const json::exception&) {
    return std::nullopt;
  }
  out.payload = scratch.text();
  return out;
}

}  // namespace room_outbox::core
