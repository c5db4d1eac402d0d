#include "core/envelope_codec.h"

#include <nlohmann/json.hpp>

#include "core/envelope_events.h"
#include "core/input_limits.h"
#include "core/sorted_json.h"

namespace room_outbox::core {
namespace {

using nlohmann::json;

Result<std::string> RequireString(const json& doc, const char* key, bool non_empty) {
  auto it = doc.find(key);
  if (it == doc.end()) {
    return Fail(ErrorCode::kInvalidArgument, std::string("envelope: missing field ") + key);
  }
  if (!it->is_string()) {
    return Fail(ErrorCode::kInvalidArgument,
                std::string("envelope: field ") + key + " is not a string");
  }
  std::string value = it->get<std::string>();
  if (non_empty && value.empty()) {
    return Fail(ErrorCode::kInvalidArgument, std::string("envelope: field ") + key + " is empty");
  }
  return value;
}

Result<int64_t> RequireInteger(const json& doc, const char* key) {
  auto it = doc.find(key);
  if (it == doc.end()) {
    return Fail(ErrorCode::kInvalidArgument, std::string("envelope: missing field ") + key);
  }
  if (!it->is_number_integer()) {
    return Fail(ErrorCode::kInvalidArgument,
                std::string("envelope: field ") + key + " is not an integer");
  }
  return it->get<int64_t>();
}

// Writes the envelope with the payload's value written by `write_payload` (after "payload":),
// then checks the size. Strings that are not valid UTF-8 fail here.
template <class WritePayload>
Status WriteWith(JsonWriter& writer, const EnvelopeFields& envelope, WritePayload write_payload) {
  writer.Clear();
  try {
    writer.Raw(R"({"event_id":)");
    writer.String(envelope.event_id);
    writer.Raw(R"(,"event_type":)");
    writer.String(envelope.event_type);
    writer.Raw(R"(,"room_id":)");
    writer.String(envelope.room_id);
    writer.Raw(R"(,"room_seq":)");
    writer.Integer(envelope.room_seq);
    writer.Raw(R"(,"command_id":)");
    writer.String(envelope.command_id);
    writer.Raw(R"(,"request_id":)");
    writer.String(envelope.request_id);
    writer.Raw(R"(,"node_id":)");
    writer.String(envelope.node_id);
    writer.Raw(R"(,"occurred_at_ms":)");
    writer.Integer(envelope.occurred_at_ms);
    writer.Raw(R"(,"payload":)");
    write_payload();
    writer.Raw("}");
  } catch (const json::exception& e) {  // invalid UTF-8 in a string field
    return Error{ErrorCode::kInvalidArgument, std::string("envelope: cannot encode: ") + e.what()};
  }
  // The payload was at most kMaxJsonDepth - 1 deep, so the envelope is at most kMaxJsonDepth.
  return CheckJsonSize("envelope", writer.text(), kMaxEnvelopeBytes);
}

// The full parse: every field present with its type, identifiers non-empty, the error naming
// the field at fault.
Result<Envelope> DecodeDocument(std::string_view text) {
  json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) {
    return Fail(ErrorCode::kInvalidArgument, "envelope: not valid JSON");
  }
  if (!doc.is_object()) {
    return Fail(ErrorCode::kInvalidArgument, "envelope: not a JSON object");
  }
  Envelope out;
  auto take = [&](const char* key, std::string& field, bool non_empty) -> Result<void> {
    auto value = RequireString(doc, key, non_empty);
    if (!value) {
      return Fail(value.error());
    }
    field = std::move(*value);
    return {};
  };
  for (auto r : {take("event_id", out.event_id, true), take("event_type", out.event_type, true),
                 take("room_id", out.room_id, true), take("command_id", out.command_id, false),
                 take("request_id", out.request_id, false), take("node_id", out.node_id, false)}) {
    if (!r) {
      return Fail(r.error());
    }
  }
  auto seq = RequireInteger(doc, "room_seq");
  if (!seq) {
    return Fail(seq.error());
  }
  out.room_seq = *seq;
  auto at = RequireInteger(doc, "occurred_at_ms");
  if (!at) {
    return Fail(at.error());
  }
  out.occurred_at_ms = *at;
  auto payload = doc.find("payload");
  if (payload == doc.end()) {
    return Fail(ErrorCode::kInvalidArgument, "envelope: missing field payload");
  }
  if (!payload->is_object()) {
    return Fail(ErrorCode::kInvalidArgument, "envelope: field payload is not an object");
  }
  out.payload = payload->dump();
  return out;
}

// A well-formed envelope is read from the parser's events (ReadEnvelopeEvents); any other text
// goes through the full parse (DecodeDocument), which names what is wrong.
Result<Envelope> Decode(std::string_view text, JsonWriter& scratch) {
  if (auto s = CheckJsonSize("envelope", text, kMaxEnvelopeBytes); !s.ok()) {
    return Fail(s.error());
  }
  if (auto read = ReadEnvelopeEvents(text, scratch)) {
    return std::move(*read);
  }
  if (auto s = CheckJsonLimits("envelope", text, kMaxEnvelopeBytes); !s.ok()) {
    return Fail(s.error());
  }
  return DecodeDocument(text);
}

}  // namespace

EnvelopeFields FieldsOf(const Envelope& envelope) {
  return EnvelopeFields{envelope.event_id, envelope.event_type,     envelope.room_id,
                        envelope.room_seq, envelope.command_id,     envelope.request_id,
                        envelope.node_id,  envelope.occurred_at_ms, envelope.payload};
}

Status WriteEnvelope(JsonWriter& writer, const EnvelopeFields& envelope) {
  // One level less than an envelope: the payload sits inside the envelope object.
  if (auto s = CheckJsonLimits("envelope payload", envelope.payload, kMaxEnvelopeBytes,
                               kMaxJsonDepth - 1);
      !s.ok()) {
    return s;
  }
  // Keys already in order (as dump() writes them, so as most producers do): written straight
  // from the parser's events. Otherwise the document is built and dump()ed.
  bool sorted = false;
  Status fast =
      WriteWith(writer, envelope, [&] { sorted = WriteSortedJson(writer, envelope.payload); });
  if (sorted) {
    return fast;
  }
  const json payload = json::parse(envelope.payload, nullptr, /*allow_exceptions=*/false);
  if (payload.is_discarded() || !payload.is_object()) {
    return Error{ErrorCode::kInvalidArgument,
                 "envelope " + std::string(envelope.event_id) + ": payload is not a JSON object"};
  }
  return WriteWith(writer, envelope, [&] { writer.Value(payload); });
}

Result<std::string> EncodeEnvelope(const Envelope& envelope) {
  JsonWriter writer;
  if (Status s = WriteEnvelope(writer, FieldsOf(envelope)); !s.ok()) {
    return Fail(s.error());
  }
  return writer.text();
}

Result<Envelope> DecodeEnvelope(std::string_view text, JsonWriter& encoded) {
  auto decoded = Decode(text, encoded);
  encoded.Clear();
  if (decoded) {
    // The payload is dump()'s text already: written as it is, it is what parsing it again and
    // writing it back gives.
    if (!WriteWith(encoded, FieldsOf(*decoded), [&] { encoded.Raw(decoded->payload); }).ok()) {
      encoded.Clear();
    }
  }
  return decoded;
}

Result<Envelope> DecodeEnvelope(std::string_view text) {
  JsonWriter scratch;
  return Decode(text, scratch);
}

}  // namespace room_outbox::core
