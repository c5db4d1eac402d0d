// The options as a Hook keeps them (hook_impl.cc).
#pragma once

#include "room_outbox/hook.h"

namespace room_outbox::internal {

// `given` with the defaults applied (sync_publish_timeout, max_body_bytes, pack_max_events,
// node_id, background_queue) and without the secrets, which only the store and the publishers
// hold (core::SecretOwner copies).
HookOptions WithDefaults(const HookOptions& given);

}  // namespace room_outbox::internal
