#include "core/tencent/im_request.h"

#include <nlohmann/json.hpp>

#include "core/envelope_codec.h"

namespace room_outbox {
namespace {

// RFC 3986 unreserved characters pass; every other byte becomes %XX.
std::string PercentEncode(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (unsigned char c : text) {
    bool unreserved = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                      (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.' || c == '~';
    if (unreserved) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 0x0F];
    }
  }
  return out;
}

}  // namespace

const char* MsgPriorityName(MsgPriority priority) {
  switch (priority) {
    case MsgPriority::kHigh: return "High";
    case MsgPriority::kNormal: return "Normal";
    case MsgPriority::kLow: return "Low";
  }
  return "High";
}

std::optional<MsgPriority> ParseMsgPriority(std::string_view name) {
  for (MsgPriority p : {MsgPriority::kHigh, MsgPriority::kNormal, MsgPriority::kLow}) {
    if (name == MsgPriorityName(p)) {
      return p;
    }
  }
  return std::nullopt;
}

uint32_t RandomForRow(int64_t row_id, uint32_t drop_generation) {
  // Unsigned arithmetic wraps mod 2^64; the low 32 bits are the sum mod 2^32.
  const uint64_t sum = static_cast<uint64_t>(row_id) +
                       static_cast<uint64_t>(drop_generation) * static_cast<uint64_t>(kRandomStride);
  return static_cast<uint32_t>(sum);
}

MsgPriority PriorityForType(const TencentImOptions& options, const std::string& event_type) {
  auto it = options.priority_by_type.find(event_type);
  return it != options.priority_by_type.end() ? it->second : options.msg_priority;
}

Result<std::string> BuildSendGroupMsgBody(const Envelope& envelope,
                                          std::string_view group_id_prefix, uint32_t random,
                                          MsgPriority priority) {
  if (envelope.room_id.empty()) {
    return Fail(ErrorCode::kInvalidArgument,
                "envelope " + envelope.event_id + ": empty room_id, no IM group to send to");
  }
  auto data = EncodeEnvelope(envelope);
  if (!data) {
    return Fail(data.error());
  }
  nlohmann::ordered_json content;
  content["Data"] = std::move(*data);
  content["Desc"] = envelope.event_type;
  content["Ext"] = envelope.event_id;
  nlohmann::ordered_json element;
  element["MsgType"] = "TIMCustomElem";
  element["MsgContent"] = std::move(content);
  nlohmann::ordered_json body;
  body["GroupId"] = std::string(group_id_prefix) + envelope.room_id;
  body["Random"] = random;
  body["MsgPriority"] = MsgPriorityName(priority);
  body["MsgBody"] = nlohmann::ordered_json::array({std::move(element)});
  try {
    return body.dump();
  } catch (const nlohmann::json::exception&) {  // invalid UTF-8 in the group id prefix
    return Fail(ErrorCode::kInvalidArgument,
                "envelope " + envelope.event_id + ": group id is not valid UTF-8");
  }
}

std::string BuildSendGroupMsgUrl(std::string_view endpoint, uint64_t sdk_app_id,
                                 std::string_view identifier, std::string_view usersig,
                                 uint32_t url_random) {
  std::string url(endpoint);
  url += "/v4/group_open_http_svc/send_group_msg?sdkappid=";
  url += std::to_string(sdk_app_id);
  url += "&identifier=";
  url += PercentEncode(identifier);
  url += "&usersig=";
  url += usersig;
  url += "&random=";
  url += std::to_string(url_random);
  url += "&contenttype=json";
  return url;
}

}  // namespace room_outbox
