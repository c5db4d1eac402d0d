// Reading a send_group_msg answer (docs/relay.md, failure scopes): one table decides what an
// IM ErrorCode, an HTTP status or a MsgDropReason means: delivery status, failure scope and a
// short reason.
//
//   answer                                   status        scope          note
//   OK, ErrorCode 0, no MsgDropReason        published     none
//   OK + MsgDropReason (MsgFreqCtrl)         rate_limited  room           definite_drop
//   10023 (group send frequency)             rate_limited  room
//   60007 60011 60018 60019 10006, HTTP 429  rate_limited  global_rate    slows the budget
//   10002 60008 60014 70169 70202 70500      retryable     row
//   80003 20004 20005 91000 90992
//   70001 (UserSig expired)                  retryable     row            sig renewed, resent
//   HTTP 5xx, 408; 200 but not IM's JSON     retryable     row
//   timeout, connection dropped after send   unknown       row            (the publisher)
//   80001 80002 80004 10004 10007 10010      permanent     undeliverable_row
//   10015 10016 10019
//   60004 60005 60006 60010 60016 60020      permanent     app            breaker opens
//   60021 70002-70020 70403 10026
//   70050 (UserSig checked too often)        retryable     app            cooldown >= 60 s
//   HTTP 4xx other than 408/429              permanent     app            (wrong endpoint/proxy)
//   any other ErrorCode                      retryable     row            not in this table:
//                                                                         retried, never parked;
//                                                                         "(unlisted code)"
#pragma once

#include <chrono>
#include <string_view>

#include "core/publisher.h"

namespace room_outbox::core {

// The IM ErrorCode that means "UserSig expired": the publisher renews the sig and tries once
// more at once.
inline constexpr int kImErrorUserSigExpired = 70001;
// "UserSig verified too often": IM locks the app out for a minute.
inline constexpr int kImErrorUserSigLockout = 70050;
inline constexpr std::chrono::milliseconds kUserSigLockoutCooldown{60000};

// One row of the table above.
struct ImVerdict {
  PublishStatus status = PublishStatus::kPermanent;
  FailureScope scope = FailureScope::kRow;
  std::chrono::milliseconds min_cooldown{0};
  const char* reason = "";  // a few words, e.g. "group not found"; empty for unlisted codes
};

// The verdict for a non-zero IM ErrorCode.
ImVerdict VerdictForImError(int code);
// The verdict for an HTTP status other than 200.
ImVerdict VerdictForHttpStatus(int http_status);

// kPublished only for HTTP 200 + JSON with ActionStatus "OK", ErrorCode 0 and no (or empty)
// MsgDropReason; otherwise status, scope and min_cooldown per the table above.
// The error text is short, e.g. "im error 10010: <ErrorInfo, at most 120 bytes>", and says
// "im error 12345 (unlisted code): ..." for a code the table lacks; it never holds the whole body.
// Sets http_status, im_error_code, scope, min_cooldown and definite_drop; latency and breaker are
// the caller's.
PublishOutcome ClassifyImResponse(int http_status, std::string_view body);

}  // namespace room_outbox::core
