// The end of a hook-side publish (inline or background): rows IM took are marked published
// under the commit's claim token, the others released to the relay at once instead of when the
// lease ends. A pack whose send failed without a definite drop has its size recorded on its
// first row (room_outbox.pack_size) before the release, so the relay sends the same pack again.
// All are best effort: a failed mark is kept in `late_marks` (late_marks.h) and written when
// the connection works again (the relay sends the row again only when that does not happen
// before a relay takes the row over after the lease), a failed pack size means the relay may
// pack the row differently (IM cannot then dedupe a resend of a delivered pack), a failed release
// that the relay takes it when the lease ends. The store writes the server's time.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "late_marks.h"
#include "room_outbox/hook.h"
#include "store/hook_store.h"
#include "sync_packs.h"

namespace room_outbox::internal {

// `what` names the publish in the warning lines ("sync publish", "background publish").
// `late_marks` (may be null: a failed mark is then only logged) keeps a failed mark. True when a
// mark failed.
bool HandBackSyncRows(HookStore& store, const std::string& token,
                      const std::vector<int64_t>& delivered, const std::vector<int64_t>& left,
                      std::string_view what, const LogCallback& log, LateMarks* late_marks,
                      const FailedPack& failed_pack = {});

}  // namespace room_outbox::internal
