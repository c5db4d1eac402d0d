#include "room_outbox/error.h"

#include "core/publisher.h"
#include "room_outbox/options.h"

namespace room_outbox {

std::string_view ErrorCodeName(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument: return "invalid_argument";
    case ErrorCode::kNotFound: return "not_found";
    case ErrorCode::kAlreadyExists: return "already_exists";
    case ErrorCode::kPermissionDenied: return "permission_denied";
    case ErrorCode::kUnavailable: return "unavailable";
    case ErrorCode::kDeadlineExceeded: return "deadline_exceeded";
    case ErrorCode::kResourceExhausted: return "resource_exhausted";
    case ErrorCode::kInternal: return "internal";
    case ErrorCode::kCancelled: return "cancelled";
    case ErrorCode::kAborted: return "aborted";
  }
  return "unknown";
}

bool IsRetryable(const Error& error) {
  return error.code == ErrorCode::kUnavailable || error.code == ErrorCode::kDeadlineExceeded ||
         error.code == ErrorCode::kResourceExhausted || error.code == ErrorCode::kAborted;
}

std::vector<std::string> DefaultSkipEventTypes() {
  return {"RoomCreated", "RoomHeatChanged", "RoomRankChanged"};
}

const char* PublishStatusName(PublishStatus status) {
  switch (status) {
    case PublishStatus::kPublished: return "published";
    case PublishStatus::kSkipped: return "skipped";
    case PublishStatus::kRetryable: return "retryable";
    case PublishStatus::kRateLimited: return "rate_limited";
    case PublishStatus::kUnknown: return "unknown";
    case PublishStatus::kPermanent: return "permanent";
    case PublishStatus::kNotAttempted: return "not_attempted";
  }
  return "unknown";
}

}  // namespace room_outbox
