// What a commit whose sync publish was skipped (SyncMode, commit_prepare.h) says: the counter it
// counts in and the error text each of its events carries.
#pragma once

#include "commit_prepare.h"
#include "hook_counters.h"

namespace room_outbox::internal {

// The counter of a skipped mode (kOff, kQueueFull, kRoomRefused, kBreakerSkipped).
SyncSkip SkipOf(SyncMode mode);

// The events' error text for a skipped mode; null when the sync publish runs (kPublish, kProbe).
const char* SkippedReason(SyncMode mode);

}  // namespace room_outbox::internal
