// TencentImPublisher: the Publisher that sends each envelope to Tencent IM's send_group_msg
// over libcurl (HTTPS, keep-alive, connection reuse).
//
// Publish() and PublishMany() share one libcurl multi handle and a pool of easy handles, so
// connections stay open across calls. Every request goes through a RateBudget when
// requests_per_second > 0. IM error 70001 (UserSig expired) renews the sig and retries the
// same body once at once, while the caller's timeout allows. Timeouts and connections dropped
// after the request went out give kUnknown: IM may have the message, and a retry is safe
// because the body (and its Random) is byte-identical.
//
// Thread-safety: calls are serialised by an internal lock; a call that cannot get it within its
// timeout returns kRetryable ("publisher busy"). For parallel publishing use PublishMany or one
// publisher per thread. Process setup: the host calls curl_global_init() before creating one.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "publisher.h"
#include "result.h"
#include "room_outbox/options.h"

namespace room_outbox {

// Validates the options and builds the publisher:
// - tencent_im.endpoint: https, or http only for a loopback host (127.0.0.0/8, localhost,
//   ::1); no query string;
// - tencent_im.sdk_app_id non-zero, tencent_im.admin_identifier and tencent_im.secret_key
//   non-empty; tencent_im.requests_per_second >= 0.
// kInvalidArgument naming the key when one is wrong; kInternal when libcurl cannot allocate.
[[nodiscard]] Result<std::unique_ptr<Publisher>> MakeTencentImPublisher(
    const TencentImOptions& options);

// As above with the UserSig clock injected (Unix seconds), for tests that need to see a sig
// being renewed.
[[nodiscard]] Result<std::unique_ptr<Publisher>> MakeTencentImPublisher(
    const TencentImOptions& options, std::function<int64_t()> now_seconds);

// The "tencent_im.endpoint" check alone, for config loaders that want to fail early: https, or
// http only for a loopback host; a host; no query, fragment or credentials. Returns the endpoint
// without trailing slashes, or kInvalidArgument with the reason (not prefixed by the key).
[[nodiscard]] Result<std::string> NormalizeImEndpoint(const std::string& endpoint);

}  // namespace room_outbox
