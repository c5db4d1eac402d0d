#include "core/tencent/im_endpoint.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <netinet/in.h>

#include <algorithm>
#include <cctype>
#include <optional>

#include "core/tencent/curl_handles.h"

namespace room_outbox::core {
namespace {

bool IsLoopbackHost(std::string host) {
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  std::transform(host.begin(), host.end(), host.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (host == "localhost") {
    return true;
  }
  in_addr v4{};
  if (inet_pton(AF_INET, host.c_str(), &v4) == 1) {
    return (ntohl(v4.s_addr) >> 24) == 127;
  }
  in6_addr v6{};
  if (inet_pton(AF_INET6, host.c_str(), &v6) == 1) {
    return IN6_IS_ADDR_LOOPBACK(&v6);
  }
  return false;
}

// One part of a parsed URL; nullopt when it has none.
std::optional<std::string> UrlPart(CURLU* url, CURLUPart which, unsigned int flags) {
  char* raw = nullptr;
  if (curl_url_get(url, which, &raw, flags) != CURLUE_OK || raw == nullptr) {
    return std::nullopt;
  }
  CurlStringPtr owned{raw};
  return std::string(owned.get());
}

}  // namespace

Result<ParsedImEndpoint> ParseImEndpoint(const std::string& endpoint) {
  auto invalid = [&](const std::string& why) {
    return Fail(ErrorCode::kInvalidArgument, "\"" + endpoint + "\": " + why);
  };
  CurlUrlPtr url{curl_url()};
  if (!url) {
    return Fail(ErrorCode::kInternal, "curl_url: out of memory");
  }
  if (CURLUcode rc = curl_url_set(url.get(), CURLUPART_URL, endpoint.c_str(), 0); rc != CURLUE_OK) {
    return invalid(curl_url_strerror(rc));
  }
  auto scheme = UrlPart(url.get(), CURLUPART_SCHEME, 0);
  auto host = UrlPart(url.get(), CURLUPART_HOST, 0);
  auto port = UrlPart(url.get(), CURLUPART_PORT, CURLU_DEFAULT_PORT);
  if (!host || host->empty()) {
    return invalid("has no host");
  }
  if (UrlPart(url.get(), CURLUPART_QUERY, 0) || UrlPart(url.get(), CURLUPART_FRAGMENT, 0)) {
    return invalid("must not have a query or fragment");
  }
  if (UrlPart(url.get(), CURLUPART_USER, 0) || UrlPart(url.get(), CURLUPART_PASSWORD, 0)) {
    return invalid("must not carry credentials");
  }
  if (scheme == "http") {
    if (!IsLoopbackHost(*host)) {
      return invalid("plain http is accepted only for a loopback host; use https");
    }
  } else if (scheme != "https") {
    return invalid("scheme must be https");
  }
  ParsedImEndpoint out;
  out.base = endpoint;
  while (!out.base.empty() && out.base.back() == '/') {
    out.base.pop_back();
  }
  out.target = "POST " + *host + ":" + port.value_or("?");
  return out;
}

Result<void> CheckImProxy(const std::string& proxy) {
  if (proxy.empty()) {
    return {};
  }
  // Never the text itself: a refused value may hold a password.
  auto invalid = [](const std::string& why) { return Fail(ErrorCode::kInvalidArgument, why); };
  CurlUrlPtr url{curl_url()};
  if (!url) {
    return Fail(ErrorCode::kInternal, "curl_url: out of memory");
  }
  if (CURLUcode rc =
          curl_url_set(url.get(), CURLUPART_URL, proxy.c_str(), CURLU_NON_SUPPORT_SCHEME);
      rc != CURLUE_OK) {
    return invalid(std::string("not a proxy URL (") + curl_url_strerror(rc) +
                   "); expected scheme://host:port");
  }
  if (UrlPart(url.get(), CURLUPART_USER, 0) || UrlPart(url.get(), CURLUPART_PASSWORD, 0)) {
    return invalid("must not carry a user or password");
  }
  auto scheme = UrlPart(url.get(), CURLUPART_SCHEME, 0).value_or("");
  constexpr const char* kSchemes[] = {"http", "https", "socks4", "socks4a", "socks5", "socks5h"};
  if (std::none_of(std::begin(kSchemes), std::end(kSchemes),
                   [&](const char* s) { return scheme == s; }) ||
      proxy.find("://") == std::string::npos) {
    return invalid("scheme must be http, https, socks4, socks4a, socks5 or socks5h");
  }
  auto host = UrlPart(url.get(), CURLUPART_HOST, 0);
  if (!host || host->empty()) {
    return invalid("has no host");
  }
  auto path = UrlPart(url.get(), CURLUPART_PATH, 0).value_or("");
  if ((!path.empty() && path != "/") || UrlPart(url.get(), CURLUPART_QUERY, 0) ||
      UrlPart(url.get(), CURLUPART_FRAGMENT, 0)) {
    return invalid("must be scheme://host:port, without a path, query or fragment");
  }
  return {};
}

Result<std::string> NormalizeImEndpoint(const std::string& endpoint) {
  auto parsed = ParseImEndpoint(endpoint);
  if (!parsed) {
    return Fail(parsed.error());
  }
  return parsed->base;
}

}  // namespace room_outbox::core
