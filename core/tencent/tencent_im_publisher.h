// TencentImPublisher: the Publisher that sends each envelope to Tencent IM's send_group_msg
// over libcurl (HTTPS, keep-alive, connection reuse).
//
// Publish() and PublishMany() share one pool of libcurl transfers (transfer_pool.h), so
// connections stay open across calls. A call runs three steps per message: admission (the
// breaker, the request budget, the message's deadline: publish_admission.h), the transfer, and
// the completion (rate feedback, the breaker's verdict, the 70001 resend: publish_completion.h).
// Every request goes through the process-wide request budget (ProcessRateBudget) when
// requests_per_second > 0; only global rate limits (60007, 60011, 60018, 60019, 10006, HTTP 429)
// slow it down. IM error 70001 (UserSig expired) renews the sig and retries the same body once at
// once, while the caller's timeout allows. Timeouts and connections dropped after the request went
// out give kUnknown: IM may have the message, and a retry is safe because the body (and its Random,
// RandomForRow) is byte-identical.
//
// Each body carries MsgPriority: the message's own override, else priority_by_type[event_type],
// else msg_priority.
//
// App-scope answers (im_response.h) open the publisher's circuit breaker (ImBreaker) for
// breaker_cooldown (at least the answer's min_cooldown): meanwhile Publish/PublishMany return
// kNotAttempted for every message at once, without a request; afterwards one message is the
// probe. The outcome that opened or closed it carries the transition (PublishOutcome::breaker).
//
// Thread-safety: calls are serialised by an internal lock; a call that cannot get it within its
// timeout returns kRetryable ("publisher busy"). For parallel publishing use PublishMany or one
// publisher per thread. Process setup: the host calls curl_global_init() before creating one.
#pragma once

#include <cstddef>
#include <memory>

#include "core/clock.h"
#include "core/publisher.h"
#include "core/result.h"
#include "core/tencent/im_endpoint.h"
#include "room_outbox/options.h"

namespace room_outbox::core {

// The most requests a publisher keeps open at once (its pool of libcurl easy handles): the
// ceiling of PublishMany's max_in_flight.
inline constexpr size_t kImPublisherPoolSize = 64;

// The app's credentials a send needs: tencent_im.sdk_app_id non-zero,
// tencent_im.admin_identifier and tencent_im.secret_key non-empty. kInvalidArgument naming the
// first key that is missing.
[[nodiscard]] Status CheckImCredentials(const TencentImOptions& options);

// Whether the publisher's caller sends: kRequired (the relay, a hook whose sync publish runs)
// checks the app's credentials; kNotUsed (a hook with sync_publish = "off", which only asks
// Sends() and never publishes) builds the publisher without them. A publisher built with
// kNotUsed and no credentials signs nothing: every message it is asked to send fails with the
// check's error, without a request.
enum class ImCredentials { kRequired, kNotUsed };

// Validates the options and builds the publisher:
// - tencent_im.endpoint: https, or http only for a loopback host (127.0.0.0/8, localhost,
//   ::1); no query string;
// - with ImCredentials::kRequired: tencent_im.sdk_app_id non-zero, tencent_im.admin_identifier
//   and tencent_im.secret_key non-empty;
// - tencent_im.requests_per_second >= 0; no empty event type in tencent_im.priority_by_type.
//   breaker_cooldown <= 0 means 60 s.
// kInvalidArgument naming the key when one is wrong; kInternal when libcurl cannot allocate.
[[nodiscard]] Result<std::unique_ptr<Publisher>> MakeTencentImPublisher(
    const TencentImOptions& options);

// As above on `clock`, which must outlive the publisher: its wall time (NowMs) signs the UserSig,
// its monotonic time (SteadyMs) bounds each request and times the latency and the breaker's
// cooldown. MakeTencentImPublisher(options) uses a SystemClock of its own.
[[nodiscard]] Result<std::unique_ptr<Publisher>> MakeTencentImPublisher(
    const TencentImOptions& options, Clock& clock,
    ImCredentials credentials = ImCredentials::kRequired);

}  // namespace room_outbox::core
