#include "tencent/im_response.h"

#include <limits>
#include <nlohmann/json.hpp>
#include <string>

#include "input_limits.h"

namespace room_outbox {
namespace {

constexpr size_t kMaxInfo = 120;

// Cuts at a UTF-8 character boundary (last_error is stored in a utf8mb4 column) and replaces
// control characters, so one log line stays one line.
std::string ShortText(std::string_view text) {
  if (text.size() > kMaxInfo) {
    size_t cut = kMaxInfo;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) {
      --cut;
    }
    text = text.substr(0, cut);
  }
  std::string out(text);
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      c = ' ';
    }
  }
  return out;
}

bool FitsInt(const nlohmann::json& number) {
  if (number.is_number_unsigned()) {
    return number.get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<int>::max());
  }
  const auto v = number.get<int64_t>();
  return v >= std::numeric_limits<int>::min() && v <= std::numeric_limits<int>::max();
}

PublishStatus StatusForImError(int code) {
  switch (code) {
    // Internal errors and timeouts inside IM; 70001 is "UserSig expired" (renew, then retry);
    // 70050 is "too many UserSig checks, retry after a minute".
    case 10002:
    case 60008:
    case 60014:
    case 70169:
    case 70202:
    case 70500:
    case 80003:
    case 20004:
    case 20005:
    case 91000:
    case 90992:
    case 70050:
    case kImErrorUserSigExpired:
      return PublishStatus::kRetryable;
    // Frequency limits.
    case 60007:
    case 60011:
    case 60018:
    case 60019:
    case 10006:
    case 10023:
      return PublishStatus::kRateLimited;
    // Everything else is a configuration or data problem (10010 group gone, 10015 bad group
    // id, 10004 bad parameter, 70003/70009 bad signature, 60004 bad account, 80002 too long).
    default:
      return PublishStatus::kPermanent;
  }
}

}  // namespace

PublishOutcome ClassifyImResponse(int http_status, std::string_view body) {
  PublishOutcome out;
  out.http_status = http_status;
  if (http_status != 200) {
    if (http_status == 429) {
      out.status = PublishStatus::kRateLimited;
    } else if (http_status >= 500 || http_status == 408) {
      out.status = PublishStatus::kRetryable;
    } else {
      out.status = PublishStatus::kPermanent;
    }
    out.error = "http " + std::to_string(http_status) + " from IM";
    return out;
  }
  if (auto s = CheckJsonLimits("invalid IM response", body, kMaxImResponseBytes); !s.ok()) {
    return {PublishStatus::kRetryable, s.error().message, http_status};
  }
  nlohmann::json doc = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) {
    out.status = PublishStatus::kRetryable;
    out.error = "invalid IM response (not JSON)";
    return out;
  }
  std::string action;
  if (auto it = doc.find("ActionStatus"); it != doc.end() && it->is_string()) {
    action = it->get<std::string>();
  }
  int code = 0;
  bool has_code = false;
  if (auto it = doc.find("ErrorCode"); it != doc.end() && it->is_number_integer()) {
    // get<int> would truncate: 4294967296 read as 0 (success), 4294977298 as 10002.
    if (!FitsInt(*it)) {
      return {PublishStatus::kRetryable, "invalid IM response (ErrorCode out of range)",
              http_status};
    }
    code = it->get<int>();
    has_code = true;
  }
  std::string info;
  if (auto it = doc.find("ErrorInfo"); it != doc.end() && it->is_string()) {
    info = ShortText(it->get<std::string>());
  }
  out.im_error_code = code;

  if (code != 0) {
    out.status = StatusForImError(code);
    out.error = "im error " + std::to_string(code);
    if (!info.empty()) {
      out.error += ": " + info;
    }
    return out;
  }
  if (action != "OK") {
    // FAIL (or nothing) without an error code: a malformed answer, not a verdict on the event.
    out.status = PublishStatus::kRetryable;
    out.error = has_code ? "invalid IM response (ActionStatus " + ShortText(action) + ")"
                         : "invalid IM response (no ErrorCode)";
    return out;
  }
  if (auto it = doc.find("MsgDropReason"); it != doc.end() && it->is_string() &&
                                           !it->get_ref<const std::string&>().empty()) {
    // IM answers success but did not deliver (per-group frequency control).
    out.status = PublishStatus::kRateLimited;
    out.error = "dropped by IM: " + ShortText(it->get<std::string>());
    return out;
  }
  out.status = PublishStatus::kPublished;
  return out;
}

}  // namespace room_outbox
