// The Tencent IM endpoint (`[tencent_im] endpoint`): the one check of its form, for the
// publisher and for config loaders that want to fail early.
#pragma once

#include <string>

#include "core/result.h"

namespace room_outbox::core {

struct ParsedImEndpoint {
  std::string base;    // the endpoint without trailing slashes
  std::string target;  // "POST host:port", for error messages
};

// https, or http only for a loopback host (127.0.0.0/8, localhost, ::1); a host; no query,
// fragment or credentials. kInvalidArgument with the reason (not prefixed by the key);
// kInternal when libcurl cannot allocate.
[[nodiscard]] Result<ParsedImEndpoint> ParseImEndpoint(const std::string& endpoint);

// The same check; returns the endpoint without trailing slashes.
[[nodiscard]] Result<std::string> NormalizeImEndpoint(const std::string& endpoint);

// `[tencent_im] proxy`: empty (no proxy), or "scheme://host[:port]" with scheme http, https,
// socks4, socks4a, socks5 or socks5h; no user or password (they would be a secret in the config
// and in --check-config), no path but "/", query or fragment. kInvalidArgument with the reason
// (not prefixed by the key); kInternal when libcurl cannot allocate.
[[nodiscard]] Result<void> CheckImProxy(const std::string& proxy);

}  // namespace room_outbox::core
