// The Hook implementation over the HookStore and Publisher seams. CreateHook (hook.h) wires
// the MariaDB store and the Tencent IM publisher; tests pass doubles through MakeHook.
#pragma once

#include <memory>

#include "background_publisher.h"
#include "commit_prepare.h"
#include "core/app_budget/app_budget_member.h"
#include "core/clock.h"
#include "core/publisher.h"
#include "room_outbox/hook.h"
#include "store/hook_store.h"
#include "sync_breaker.h"

namespace room_outbox::internal {

// The background publisher's own database connection and HTTP client (sync_publish =
// kBackground; background_publisher.h). Both null otherwise.
struct BackgroundParts {
  std::unique_ptr<HookStore> store;
  std::unique_ptr<core::Publisher> publisher;
};

// `clock` is the Hook's one clock: its monotonic time must be the one `store` takes
// CommitWrite::lease_start_ms from (the command's deadline is lease_start_ms +
// sync_publish_timeout on it), and it is the sync breaker's time; its wall time is only the
// default occurred_at_ms. `sync_breaker` null: the hook gets a breaker of its own (CreateHook
// passes the process's, ProcessSyncBreaker). With sync_publish = kBackground and no `background`
// parts, every commit finds the background queue full (rows to the relay). `app_budget`: the
// process's member of the app's shared IM budget, held while the Hook lives (CreateHook passes
// JoinAppBudget's).
std::unique_ptr<Hook> MakeHook(const HookOptions& options, std::unique_ptr<HookStore> store,
                               std::unique_ptr<core::Publisher> publisher,
                               std::unique_ptr<core::Clock> clock,
                               std::shared_ptr<core::ImBreaker> sync_breaker = nullptr,
                               BackgroundParts background = {},
                               std::shared_ptr<core::AppBudgetMember> app_budget = nullptr);

}  // namespace room_outbox::internal
