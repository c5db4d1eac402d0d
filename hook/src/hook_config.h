// The hook's view of relay.toml as a SharedConfig (core/config/shared_config.h), for the two
// readers of it: LoadHookOptions (a whole file) and the C ABI's options (a file, then keys set
// one by one with the same rules).
#pragma once

#include <string>

#include "core/config/shared_config.h"
#include "core/config/toml_reader.h"
#include "core/result.h"

namespace room_outbox::internal {

// What to do with the keys outbox-relay reads and the hook does not ([log], [metrics],
// [outbox_worker] but ordering, [wake] but socket).
enum class RelayKeys {
  kAccept,  // a file shared with outbox-relay: accepted and not read (--check-config checks them)
  kRefuse,  // one option set by name: an unknown key, since it would have no effect
};

// Reads every key the hook reads through `top` (the root table): top-level node_id, [mysql],
// [tencent_im], [hook], [wake] socket, [outbox_worker] ordering; then checks for unknown keys.
// Errors land in the readers' shared error, naming the key.
void ReadHookSections(TableReader& top, SharedConfig& config, RelayKeys relay_keys);

// Reads the file at `path` as LoadHookOptions does, secrets and node_id's default included.
Result<SharedConfig> LoadHookConfig(const std::string& path);

}  // namespace room_outbox::internal
