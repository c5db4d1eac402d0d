// Publisher: delivers one envelope to Tencent IM (the only sink in V1).
// The libcurl implementation is TencentImPublisher (tencent/tencent_im_publisher.h); unit tests
// use MockPublisher (tests/mocks/mock_publisher.h).
#pragma once

#include <chrono>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "room_outbox/envelope.h"

namespace room_outbox {

enum class PublishStatus {
  kPublished,    // IM accepted it: HTTP 200, ActionStatus OK, ErrorCode 0, no MsgDropReason
  kSkipped,      // an event type not sent to IM (skip_event_types): a no-op success
  kRetryable,    // transient: network error, HTTP 5xx, IM internal error, expired UserSig
  kRateLimited,  // a frequency limit (60007, 60011, 60018, 60019, 10006, 10023, MsgDropReason)
  kUnknown,      // timed out or the connection dropped after sending: IM may have it
  kPermanent,    // config or data problem (bad group, bad signature); retried all the same
};

// "published", "skipped", "retryable", "rate_limited", "unknown", "permanent".
const char* PublishStatusName(PublishStatus status);

struct PublishOutcome {
  PublishStatus status = PublishStatus::kRetryable;
  // Short, secret-free reason when not delivered, e.g. "im error 10010: group not found" or
  // "timeout after 3000ms". Never the secret key, the UserSig or the whole response body.
  std::string error;
  int http_status = 0;    // 0 when no HTTP answer arrived
  int im_error_code = 0;  // ErrorCode from the body, when there was one
  std::chrono::milliseconds latency{0};

  bool delivered() const {
    return status == PublishStatus::kPublished || status == PublishStatus::kSkipped;
  }
};

class Publisher {
 public:
  virtual ~Publisher() = default;

  // Publishes one envelope; returns within `timeout` (plus scheduling noise).
  virtual PublishOutcome Publish(const Envelope& envelope, std::chrono::milliseconds timeout) = 0;

  // False for an event type that is never sent (skip_event_types): publishing it is a no-op
  // success (kSkipped). Lets callers deliver such rows without a send slot or a room's pace.
  virtual bool Sends(std::string_view event_type) const = 0;

  // Publishes several envelopes with up to `max_in_flight` requests open at once, each bounded
  // by its own `timeout`. Returns one outcome per envelope, in the same order. Callers pass at
  // most one envelope per room when per-room order matters.
  virtual std::vector<PublishOutcome> PublishMany(std::span<const Envelope> envelopes,
                                                  std::chrono::milliseconds timeout,
                                                  size_t max_in_flight) = 0;
};

}  // namespace room_outbox
