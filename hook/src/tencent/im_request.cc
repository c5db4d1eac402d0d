#include "tencent/im_request.h"

#include <openssl/sha.h>

#include <nlohmann/json.hpp>

#include "envelope_codec.h"

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

uint32_t RandomForEvent(std::string_view event_id) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(event_id.data()), event_id.size(), digest);
  return (static_cast<uint32_t>(digest[0]) << 24) | (static_cast<uint32_t>(digest[1]) << 16) |
         (static_cast<uint32_t>(digest[2]) << 8) | static_cast<uint32_t>(digest[3]);
}

Result<std::string> BuildSendGroupMsgBody(const Envelope& envelope,
                                          std::string_view group_id_prefix) {
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
  body["Random"] = RandomForEvent(envelope.event_id);
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
