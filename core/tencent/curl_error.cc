#include "core/tencent/curl_error.h"

#include <algorithm>
#include <string>

namespace room_outbox::core {
namespace {

constexpr size_t kMaxDetail = 160;

ErrorCode CodeFor(CURLcode code) {
  switch (code) {
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_CONNECT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_WEIRD_SERVER_REPLY:
    case CURLE_AGAIN:
      return ErrorCode::kUnavailable;
    case CURLE_OPERATION_TIMEDOUT:
      return ErrorCode::kDeadlineExceeded;
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_INVALIDCERTSTATUS:
    case CURLE_SSL_CRL_BADFILE:
    case CURLE_LOGIN_DENIED:
      return ErrorCode::kPermissionDenied;
    case CURLE_UNSUPPORTED_PROTOCOL:
    case CURLE_URL_MALFORMAT:
    case CURLE_NOT_BUILT_IN:
    case CURLE_BAD_FUNCTION_ARGUMENT:
    case CURLE_UNKNOWN_OPTION:
      return ErrorCode::kInvalidArgument;
    default:
      return ErrorCode::kInternal;
  }
}

}  // namespace

Error FromCurlCode(CURLcode code, std::string_view where, std::string_view detail) {
  std::string message(where);
  message += ": ";
  message += curl_easy_strerror(code);
  message += " [" + std::to_string(static_cast<int>(code)) + "]";
  if (!detail.empty()) {
    message += ": ";
    message += detail.substr(0, kMaxDetail);
  }
  return Error{CodeFor(code), std::move(message)};
}

Error FromCurlMultiCode(CURLMcode code, std::string_view where) {
  std::string message(where);
  message += ": ";
  message += curl_multi_strerror(code);
  message += " [" + std::to_string(static_cast<int>(code)) + "]";
  return Error{ErrorCode::kInternal, std::move(message)};
}

Error FromCurlUrlCode(CURLUcode code, std::string_view where) {
  std::string message(where);
  message += ": ";
  message += curl_url_strerror(code);
  message += " [" + std::to_string(static_cast<int>(code)) + "]";
  return Error{ErrorCode::kInvalidArgument, std::move(message)};
}

std::string RedactCurlDetail(std::string_view detail) {
  // libcurl texts rarely hold a URL, but when one does, its query string carries the usersig.
  std::string out;
  out.reserve(std::min(detail.size(), kMaxDetail));
  bool in_query = false;
  for (char c : detail) {
    if (out.size() >= kMaxDetail) {
      break;
    }
    if (c == '?') {
      in_query = true;
      out += "?<redacted>";
      continue;
    }
    if (in_query) {
      if (c == ' ' || c == '\n' || c == '\t') {
        in_query = false;
      } else {
        continue;
      }
    }
    if (c == '\n' || c == '\r') {
      continue;  // libcurl's error buffer sometimes ends in a newline
    }
    out += c;
  }
  return out;
}

}  // namespace room_outbox::core
