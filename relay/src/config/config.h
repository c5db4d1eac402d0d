// The relay's configuration: one TOML file parsed into a plain struct. The sections the hook's
// hosts read too (node_id, [mysql], [tencent_im], [hook], [wake] socket, [outbox_worker]
// ordering) are read by core/config/shared_config.h; this file adds the relay's own keys.
//
// Every key is checked at load time: unknown keys, wrong types, malformed durations and invalid
// values are errors that name the key (and file:line:col where the file has a position for it).
// The daemon refuses to start on any of them. Secrets: core/config/secrets.h.
//
// Durations are strings "<integer><unit>", unit ms|s|m|h. For the original [outbox_worker] keys
// (and the other durations) a value <= 0 means the default, so that no setting can produce a busy
// loop, an unbounded scan or an unbounded call.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#include "core/config/shared_config.h"
#include "core/result.h"
#include "room_outbox/options.h"
#include "telemetry/log_line.h"
#include "worker/wake_gap.h"
#include "worker/worker_options.h"

namespace room_outbox::relay {

struct MetricsConfig {
  // "host:port" for GET /metrics (Prometheus text). Empty: no endpoint.
  std::string listen;
};

// [wake] socket_mode's default: the relay's user and the socket file's group may send to the
// socket, no one else. The file's group is the relay's group: the shipped unit runs the relay
// with Group=room-outbox-wake, the group room-service's user must be in to wake it
// (docs/relay.md, "The wake socket"). "0666" lets any local user wake the relay; a datagram only
// shortens the relay's idle wait, and WakeGap bounds what any number of them costs
// (worker/wake_gap.h).
inline constexpr mode_t kDefaultWakeSocketMode = 0660;

// The relay's own [wake] keys ([wake] socket is SharedConfig::wake_socket, read by the hook too).
struct WakeConfig {
  // The least time between the starts of two rounds a wake-up starts (WakeGap); at most
  // poll_interval.
  std::chrono::milliseconds min_interval = kDefaultWakeMinInterval;
  // The socket file's permission bits (chmod after bind, whatever the umask); at most 0777.
  mode_t socket_mode = kDefaultWakeSocketMode;
};

// "0660": `mode` as four octal digits.
std::string FormatSocketMode(mode_t mode);

// The whole file: the shared sections (SharedConfig) and the relay's own.
struct Config : core::SharedConfig {
  WorkerConfig outbox_worker;  // outbox_worker.ordering follows SharedConfig::per_room_order
  LogConfig log;
  MetricsConfig metrics;
  WakeConfig wake;
};

// Reads, parses and validates the file. Errors are kInvalidArgument ("path:line:col: ...") for bad
// content and kNotFound/kPermissionDenied for an unreadable config or secret file. `secrets`: the
// daemon loads all; the operator commands and `migrate` load the database's only (the IM key's
// file is then never opened and may be absent).
core::Result<Config> LoadConfig(const std::string& path,
                                core::SecretUse secrets = core::SecretUse::kAll);

// Every name LoadConfig accepts, sorted, spelled as in the file: top-level keys ("node_id"),
// tables ("mysql", "tencent_im.priority_by_type": its keys are free, event types) and the keys
// of each table ("mysql.host"). What the loader asks for, so it cannot miss one (the man page
// test compares it with outbox-relay.toml(5)).
std::vector<std::string> ConfigKeys();

// The IM app id the shipped templates in conf/ carry (a placeholder, no real application): a
// relay run with it would only be refused by IM, so CheckRunnable refuses it first.
inline constexpr uint64_t kPlaceholderSdkAppId = 1400000000;

// Checks what the daemon needs beyond a valid file: the IM sdk_app_id (set, and not the
// templates' placeholder) and secret key. A config can be valid without them (e.g. for the hook),
// but the relay refuses to start (exit code 2) and --check-config refuses it.
Status CheckRunnable(const Config& config);

// The effective config as TOML, every key with its value after defaults and normalization, secrets
// shown as "<redacted>" (set) or "<unset>".
std::string RenderEffectiveConfig(const Config& config);

// True for trace, debug, info, warn, error.
bool IsValidLogLevel(const std::string& level);

}  // namespace room_outbox::relay
