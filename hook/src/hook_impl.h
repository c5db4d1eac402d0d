// The Hook implementation over the OutboxStore and Publisher seams. CreateHook (hook.h) wires
// the MariaDB store and the Tencent IM publisher; tests pass doubles through MakeHook.
#pragma once

#include <memory>

#include "clock.h"
#include "outbox_store.h"
#include "publisher.h"
#include "room_outbox/hook.h"

namespace room_outbox::internal {

std::unique_ptr<Hook> MakeHook(const HookOptions& options, std::unique_ptr<OutboxStore> store,
                               std::unique_ptr<Publisher> publisher,
                               std::unique_ptr<Clock> clock);

// The lease written on a command's pending rows (counted on the server's clock from their
// insert): long enough for the sync publish of every pending event (each bounded by
// sync_timeout, all by a deadline measured from just before the insert) plus a margin for the
// marks, so the relay does not send a row the hook is still working on.
int64_t SyncLeaseMs(std::chrono::milliseconds sync_timeout, size_t events);

}  // namespace room_outbox::internal
