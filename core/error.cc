#include "core/publisher.h"

namespace room_outbox::core {

const char* PublishStatusName(PublishStatus status) {
  switch (status) {
    case PublishStatus::kPublished:
      return "published";
    case PublishStatus::kSkipped:
      return "skipped";
    case PublishStatus::kRetryable:
      return "retryable";
    case PublishStatus::kRateLimited:
      return "rate_limited";
    case PublishStatus::kUnknown:
      return "unknown";
    case PublishStatus::kPermanent:
      return "permanent";
    case PublishStatus::kNotAttempted:
      return "not_attempted";
  }
  return "unknown";
}

}  // namespace room_outbox::core
