// The end of a hook-side publish (inline or background): rows IM took are marked published
// under the commit's claim token, the others released to the relay at once instead of when the
// lease ends. Both are best effort: a failed mark only means the relay may send the row again
// after the lease, a failed release that the relay takes it when the lease ends. The store
// writes the server's time.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "room_outbox/hook.h"
#include "store/hook_store.h"

namespace room_outbox::internal {

// `what` names the publish in the warning lines ("sync publish", "background publish").
void HandBackSyncRows(HookStore& store, const std::string& token,
                      const std::vector<int64_t>& delivered, const std::vector<int64_t>& left,
                      std::string_view what, const LogCallback& log);

}  // namespace room_outbox::internal
