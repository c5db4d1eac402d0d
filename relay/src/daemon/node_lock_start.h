// The daemon's stores behind its node lock (store/node_lock.h): the lock is taken at start, and a
// relay whose node_id another live relay holds is refused (exit code 2: two relays configured
// with one node_id; restarting would not help). A database that cannot be reached at start is no
// refusal: the first claim takes the lock when it can, as the store connects when it can.
// `outbox-relay --once` takes no lock (it runs beside a daemon with the same config) and claims
// with plain tokens.
#pragma once

#include <functional>
#include <memory>

#include "config/config.h"
#include "core/result.h"
#include "store/node_lock.h"
#include "store/node_locked_store.h"
#include "telemetry/log_line.h"

namespace room_outbox::relay {

// Destroyed in reverse order: the stores before the lock they use.
struct LockedStores {
  std::unique_ptr<NodeLock> lock;
  // Logs a take after the start's (the first claim's after a failed start, or any take after the
  // lock's connection was lost), whoever made it: a claim or the run's beat (lease_takeover.h).
  std::function<void(const NodeLockHold&)> on_taken;
  std::unique_ptr<NodeLockedStore> store;
  std::unique_ptr<NodeLockedStore> ahead;  // null when there is no claim-ahead store
};

// Takes the node lock now and wraps `store` and `ahead` (may be null), which must outlive the
// result. Fails (logged) only when another live relay holds the lock (kAlreadyExists).
core::Result<LockedStores> LockNode(const Config& config, RelayStore& store, RelayStore* ahead,
                                    Logger& logger);

}  // namespace room_outbox::relay
