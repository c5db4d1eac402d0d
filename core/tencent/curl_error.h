// The one mapping from libcurl result codes to the project's Error, and a checked
// curl_easy_setopt. Messages name the operation and target and carry libcurl's own text, e.g.
//   "curl_easy_perform(POST 127.0.0.1:8080): Couldn't connect to server [7]".
#pragma once

#include <curl/curl.h>

#include <string>
#include <string_view>

#include "core/result.h"

namespace room_outbox::core {

// Connect, resolve, send and receive failures -> kUnavailable; CURLE_OPERATION_TIMEDOUT ->
// kDeadlineExceeded; TLS peer verification and certificate problems -> kPermissionDenied; bad
// URLs and options -> kInvalidArgument; everything else -> kInternal.
// `detail` (e.g. the CURLOPT_ERRORBUFFER text) is appended when non-empty; callers must make
// sure it holds no secret (see RedactCurlDetail).
Error FromCurlCode(CURLcode code, std::string_view where, std::string_view detail = {});

// Multi-interface failures are programming or resource errors: kInternal.
Error FromCurlMultiCode(CURLMcode code, std::string_view where);

// URL parser failures: kInvalidArgument.
Error FromCurlUrlCode(CURLUcode code, std::string_view where);

// Makes libcurl's free-form error text safe for logs and last_error: cuts any query string
// (which carries the usersig) and bounds the length.
std::string RedactCurlDetail(std::string_view detail);

// curl_easy_setopt with its result checked; `name` is the option's name for the message.
template <class T>
[[nodiscard]] Result<void> SetOption(CURL* handle, CURLoption option, T value,
                                     std::string_view name) {
  CURLcode code = curl_easy_setopt(handle, option, value);
  if (code != CURLE_OK) {
    return Fail(FromCurlCode(code, "curl_easy_setopt(" + std::string(name) + ")"));
  }
  return {};
}

}  // namespace room_outbox::core
