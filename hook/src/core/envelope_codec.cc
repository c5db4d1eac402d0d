#include "core/envelope_codec.h"

#include <nlohmann/json.hpp>

#include "core/input_limits.h"

namespace room_outbox {
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

}  // namespace

Result<std::string> EncodeEnvelope(const Envelope& envelope) {
  // One level less than an envelope: the payload sits inside the envelope object.
  if (auto s = CheckJsonLimits("envelope payload", envelope.payload, kMaxEnvelopeBytes,
                               kMaxJsonDepth - 1);
      !s.ok()) {
    return Fail(s.error());
  }
  json payload = json::parse(envelope.payload, nullptr, /*allow_exceptions=*/false);
  if (payload.is_discarded() || !payload.is_object()) {
    return Fail(ErrorCode::kInvalidArgument,
                "envelope " + envelope.event_id + ": payload is not a JSON object");
  }
  // ordered_json keeps the documented field order, so equal envelopes encode to equal bytes.
  nlohmann::ordered_json doc;
  doc["event_id"] = envelope.event_id;
  doc["event_type"] = envelope.event_type;
  doc["room_id"] = envelope.room_id;
  doc["room_seq"] = envelope.room_seq;
  doc["command_id"] = envelope.command_id;
  doc["request_id"] = envelope.request_id;
  doc["node_id"] = envelope.node_id;
  doc["occurred_at_ms"] = envelope.occurred_at_ms;
  doc["payload"] = std::move(payload);
  try {
    std::string text = doc.dump();
    if (auto s = CheckJsonLimits("envelope", text, kMaxEnvelopeBytes); !s.ok()) {
      return Fail(s.error());
    }
    return text;
  } catch (const json::exception& e) {  // invalid UTF-8 in a string field
    return Fail(ErrorCode::kInvalidArgument,
                std::string("envelope: cannot encode: ") + e.what());
  }
}

Result<Envelope> DecodeEnvelope(std::string_view text) {
  if (auto s = CheckJsonLimits("envelope", text, kMaxEnvelopeBytes); !s.ok()) {
    return Fail(s.error());
  }
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

}  // namespace room_outbox
