// The hook's view of relay.toml as a SharedConfig (core/config/shared_config.h), for the two
// readers of it: LoadHookOptions (a whole file) and the C ABI's options (a file, then keys set
// one by one with the same rules).
#pragma once

#include <string>

#include "core/config/shared_config.h"
#include "core/config/toml_reader.h"
#include "core/result.h"
#include "room_outbox/hook.h"

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
void ReadHookSections(core::TableReader& top, core::SharedConfig& config, RelayKeys relay_keys);

// Sets `options` to what a host of this file runs with (log left as it is), secrets included.
void ToHookOptions(const core::SharedConfig& config, HookOptions& options);

// Wipes the secrets of a HookOptions the hook made for itself (a public struct, which cannot wipe
// itself) when the scope ends.
class WipedOnExit {
 public:
  explicit WipedOnExit(HookOptions& options) : options_(options) {}
  ~WipedOnExit();
  WipedOnExit(const WipedOnExit&) = delete;
  WipedOnExit& operator=(const WipedOnExit&) = delete;

 private:
  HookOptions& options_;
};

// Reads the file at `path` as LoadHookOptions does, secrets and node_id's default included.
core::Result<core::SharedConfig> LoadHookConfig(const std::string& path);

}  // namespace room_outbox::internal
