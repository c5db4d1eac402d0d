// The Hook implementation over the HookStore and Publisher seams. CreateHook (hook.h) wires
// the MariaDB store and the Tencent IM publisher; tests pass doubles through MakeHook.
#pragma once

#include <memory>

#include "background_publisher.h"
#include "core/clock.h"
#include "core/publisher.h"
#include "hook_store.h"
#include "room_outbox/hook.h"
#include "sync_breaker.h"

namespace room_outbox::internal {

// The background publisher's own database connection and HTTP client (sync_publish =
// kBackground; background_publisher.h). Both null otherwise.
struct BackgroundParts {
  std::unique_ptr<HookStore> store;
  std::unique_ptr<Publisher> publisher;
};

// `sync_breaker` null: the hook gets a breaker of its own (CreateHook passes the process's,
// ProcessSyncBreaker). The breaker's time is clock->SteadyMs(). With sync_publish = kBackground
// and no `background` parts, every commit finds the background queue full (rows to the relay).
std::unique_ptr<Hook> MakeHook(const HookOptions& options, std::unique_ptr<HookStore> store,
                               std::unique_ptr<Publisher> publisher, std::unique_ptr<Clock> clock,
                               std::shared_ptr<SyncBreaker> sync_breaker = nullptr,
                               BackgroundParts background = {});

// The lease written on a command's pending rows (counted on the server's clock from their
// insert): long enough for the command's sync publish (all its events within one sync_timeout,
// measured from just before the insert) plus a margin for the marks, so the relay does not send
// a row the hook is still working on.
int64_t SyncLeaseMs(std::chrono::milliseconds sync_timeout);

// The widest Random a body can carry: the commit-time body-size check builds the body with it,
// so no row id or drop generation can make the real body longer.
inline constexpr uint32_t kWidestRandom = 4294967295u;

}  // namespace room_outbox::internal
