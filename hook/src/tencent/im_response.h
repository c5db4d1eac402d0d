// Reading a send_group_msg answer (TENCENT_IM.md §1, §2a, §4): one table decides what an
// HTTP status and IM ErrorCode mean for delivery.
#pragma once

#include <string_view>

#include "publisher.h"

namespace room_outbox {

// The IM ErrorCode that means "UserSig expired": the publisher renews the sig and tries once
// more at once.
inline constexpr int kImErrorUserSigExpired = 70001;

// kPublished only for HTTP 200 + JSON with ActionStatus "OK", ErrorCode 0 and no (or empty)
// MsgDropReason. OK + MsgDropReason -> kRateLimited (IM dropped it by frequency control).
// HTTP 5xx/408 -> kRetryable, 429 -> kRateLimited, other non-200 -> kPermanent.
// A 200 whose body is not a JSON object -> kRetryable. ErrorCode classes per TENCENT_IM.md §4:
// internal errors and timeouts and 70001 -> kRetryable; frequency limits -> kRateLimited;
// the rest (bad group, bad signature, bad request) -> kPermanent.
// The error text is short, e.g. "im error 10010: <ErrorInfo, at most 120 bytes>"; it never
// holds the whole body. Sets http_status and im_error_code; latency is the caller's.
PublishOutcome ClassifyImResponse(int http_status, std::string_view body);

}  // namespace room_outbox
