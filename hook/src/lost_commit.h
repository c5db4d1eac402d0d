// A COMMIT whose answer was lost (CommitOutcome::kCommitLost) is resolved by looking its
// command_id up in the command log, with a locking read that waits for a transaction of the
// command still in flight on the server: found -> committed, not found -> failed (rolled back),
// lookup impossible (after one retry of a retryable failure) -> unknown. Not found on a read-only
// server -> unknown too: after a failover that kept the address, the lookup may reach a replica
// that has not applied the command yet.
#pragma once

#include <string>

#include "room_outbox/hook.h"
#include "store/hook_store.h"

namespace room_outbox::internal {

// True when the command committed: `write.row_ids` then hold its rows as read back. Otherwise
// fills `result` (kFailed or kUnknown, with the error) and logs it.
bool ResolveLostCommit(HookStore& store, const std::string& command_id, CommitWrite& write,
                       CommitResult& result, const LogCallback& log);

}  // namespace room_outbox::internal
