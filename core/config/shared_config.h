// The parts of relay.toml that every reader of the file shares: outbox-relay
// (relay/src/config/config.h) and the hook's hosts (LoadHookOptions in room_outbox/hook.h:
// room-sim, the C ABI, the Go package). One file configures both sides of a deployment.
//
//   node_id                     the environment's ROOM_OUTBOX_NODE_ID (kNodeIdEnv) wins when set;
//                               default: the host name (HostName)
//   [mysql]                     MysqlOptions; password from password_file or the environment
//   [tencent_im]                TencentImOptions; secret key from secret_key_file or environment
//   [tencent_im.priority_by_type]
//   [tencent_im.max_age_by_type]   relay only (the hook accepts it and never uses it)
//   [hook]                      sync_publish_timeout, sync_publish
//   [wake] socket               the relay binds it, the hook sends to it
//   [outbox_worker] ordering    the relay's order, which the hook's sync publish follows
//
// Each Read* function reads its keys through a TableReader (toml_reader.h); a value that breaks a
// rule sets the reader's error naming the key. Defaults are those of the option structs.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "core/config/toml_reader.h"
#include "core/result.h"
#include "core/wipe.h"
#include "room_outbox/options.h"

namespace room_outbox::core {

// [hook]: what a host's Hook does after COMMIT (HookOptions of the same names).
struct HookSection {
  std::chrono::milliseconds sync_publish_timeout = kDefaultSyncPublishTimeout;
  SyncPublishMode sync_publish = SyncPublishMode::kInline;
};

// Its secrets (mysql.password, tencent_im.secret_key) are wiped whenever a SharedConfig (or a
// copy, or the relay's Config) is destroyed, assigned over or moved from (core/wipe.h).
struct SharedConfig {
  std::string path;     // the file it came from
  std::string node_id;  // after LoadSharedSecretsAndDefaults: never empty
  SecretOwner<MysqlOptions> mysql;
  std::string mysql_password_file;  // as written (resolved by LoadSecret)
  SecretOwner<TencentImOptions> tencent_im;
  std::string tim_secret_key_file;
  // [tencent_im.max_age_by_type]: event_type -> the oldest an event of that type may be when its
  // turn to be sent comes in the relay (age on the database server's clock); an older one is
  // parked with reason "expired" instead of sent. Every value > 0. Empty (the default): no
  // expiry. The relay's only (a commit never expires its own events), read here because the
  // hook's loaders read the same [tencent_im] section and refuse unknown keys.
  std::map<std::string, std::chrono::milliseconds> max_age_by_type;
  HookSection hook;
  // [wake] socket: absolute path of the relay's unix datagram socket; "" = none.
  std::string wake_socket;
  // [outbox_worker] ordering: "per_room" (true, the default) or "none".
  bool per_room_order = true;
  // What LoadSharedSecretsAndDefaults noticed in the files it opened that is allowed but unsafe
  // (a secret file, or the TLS client key, that others may read), one sentence each. The relay
  // adds the link's TLS warning (TlsExposureWarning) and logs them at start and on reload,
  // --check-config prints them; the hook hands them to its host (docs/hook.md, "Warnings about
  // the configuration").
  std::vector<std::string> warnings;
};

// Which secrets a reader of the file loads: the daemon and the hook publish and need both; the
// operator commands and `migrate` talk to the database only and never open the IM key's file
// (nor need its credential).
enum class SecretUse { kAll, kDatabaseOnly };

// Reads top-level node_id and the [mysql], [tencent_im], [hook] sections through `top` (the
// file's root table), with CheckUnknown on each of those sections.
void ReadSharedSections(TableReader& top, SharedConfig& config);
// [wake] socket only: the relay's reader adds its other [wake] keys and checks for unknown ones.
void ReadWakeSocket(TableReader& wake, SharedConfig& config);
// [outbox_worker] ordering only (the relay's reader owns the section's other keys).
void ReadOrdering(TableReader& outbox_worker, SharedConfig& config);

// node_id from the environment when set there (a pod's name through Kubernetes' downward API).
inline constexpr const char* kNodeIdEnv = "ROOM_OUTBOX_NODE_ID";

// The secrets `use` names from their files or the environment (secrets.h), the TLS files, and
// node_id from the environment (kNodeIdEnv) or its default; fills `warnings` with what those files'
// modes expose. With kDatabaseOnly, tencent_im.secret_key stays empty.
Result<void> LoadSharedSecretsAndDefaults(SharedConfig& config, SecretUse use = SecretUse::kAll);

}  // namespace room_outbox::core
