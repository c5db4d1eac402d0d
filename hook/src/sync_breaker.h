// The sync-publish scope of the IM breaker (core/tencent/im_breaker.h).
//
// During an IM outage every command would otherwise pay sync_publish_timeout before its
// rows go to the relay anyway. After 3 consecutive sync publishes that found IM failing (no
// answer, HTTP 5xx, an app-wide or global-rate error, the publisher's own breaker open) the
// breaker opens: for 30 s Commit does not try the sync publish at all and writes its rows due at
// once for the relay (DeliveryState::kPending, error "sync publish skipped: IM failing, breaker
// open"). After the cooldown exactly one commit is the probe: its sync publish runs as usual;
// success closes the breaker, failure opens it for another cooldown. Answers about the message
// itself (delivered, a room's frequency control, a bad group) prove IM works and reset the count;
// a timeout cut short by the command's own deadline proves nothing either way. Sync publishes
// that were under way when the breaker opened do not push the cooldown out.
//
// Scope: process-wide. CreateHook gives every Hook of the process configured for the same IM
// endpoint and sdk_app_id the same breaker (ProcessSyncBreaker), so with one Hook per thread an
// outage costs the process 3 timeouts, not 3 per thread. Hooks built by MakeHook without one get
// a private breaker (unit tests).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "core/publisher.h"
#include "core/tencent/im_breaker.h"
#include "room_outbox/hook.h"

namespace room_outbox::internal {

inline constexpr core::BreakerSettings kSyncBreakerSettings{
    .failures_to_open = 3,
    .cooldown = std::chrono::milliseconds(30000),
    .late_failures_extend = false,
};

// A private breaker of the sync scope.
std::shared_ptr<core::ImBreaker> MakeSyncBreaker();

// What one sync publish says about IM as a whole. `cut` is true when the command's deadline, not
// sync_publish_timeout, bounded the call.
core::ImBreaker::Verdict SyncVerdict(const core::PublishOutcome& outcome, bool cut);

// Records one sync publish's outcome (inline or background) and logs the breaker opening or
// closing once each through `log` (may be empty).
void NoteSyncOutcome(core::ImBreaker& breaker, const core::PublishOutcome& outcome, bool cut,
                     bool probe, int64_t steady_ms, const LogCallback& log);

// The process's sync breaker for hooks aimed at `endpoint` and `sdk_app_id`: the same object
// while anyone holds it (core/process_registry.h). Thread-safe.
std::shared_ptr<core::ImBreaker> ProcessSyncBreaker(const std::string& endpoint,
                                                    uint64_t sdk_app_id);

}  // namespace room_outbox::internal
