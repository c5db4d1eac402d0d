#include "sync_skip.h"

namespace room_outbox::internal {
namespace {

constexpr const char* kBreakerSkipped = "sync publish skipped: IM failing, breaker open";
constexpr const char* kSyncOff = "sync publish off: left for the relay";
constexpr const char* kQueueFull = "background publish queue full: left for the relay";
constexpr const char* kRoomRefused =
    "sync publish skipped: the room's group refused IM frequency control, backed off: left for "
    "the relay";

}  // namespace

SyncSkip SkipOf(SyncMode mode) {
  switch (mode) {
    case SyncMode::kOff:
      return SyncSkip::kSyncOff;
    case SyncMode::kQueueFull:
      return SyncSkip::kQueueFull;
    case SyncMode::kRoomRefused:
      return SyncSkip::kRoomRefused;
    default:
      return SyncSkip::kBreakerOpen;
  }
}

const char* SkippedReason(SyncMode mode) {
  switch (mode) {
    case SyncMode::kOff:
      return kSyncOff;
    case SyncMode::kBreakerSkipped:
      return kBreakerSkipped;
    case SyncMode::kQueueFull:
      return kQueueFull;
    case SyncMode::kRoomRefused:
      return kRoomRefused;
    default:
      return nullptr;
  }
}

}  // namespace room_outbox::internal
