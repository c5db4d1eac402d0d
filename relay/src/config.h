// The relay's configuration: one TOML file parsed into a plain struct.
//
// LoadConfig is the only code that touches toml++. Every key is checked at load time: unknown keys,
// wrong types, malformed durations and invalid values are errors that name the key (and
// file:line:col where the file has a position for it). The daemon refuses to start on any of them.
//
// Secrets (the MariaDB password, the Tencent IM secret key) never come from the command line:
//   - from a file named by mysql.password_file / tencent_im.secret_key_file. A relative path is
//     resolved against $CREDENTIALS_DIRECTORY when set (systemd LoadCredential=), else against the
//     directory of the config file. One trailing newline (and \r) is trimmed.
//   - from the environment: ROOM_OUTBOX_MYSQL_PASSWORD, ROOM_OUTBOX_TIM_SECRET_KEY.
//   When both are present the ENVIRONMENT WINS: an operator can override a deployed file for one
//   run without editing it, which is the usual precedence of the environment over files. A named
//   file must still be readable (a typo in a path is an error even when the variable is set).
// Error texts name the key and the path, never a secret's content.
//
// Durations are strings "<integer><unit>", unit ms|s|m|h. For the seed's [outbox_worker] keys (and
// the other durations) a value <= 0 means the default, so that no setting can produce a busy loop,
// an unbounded scan or an unbounded call.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#include "result.h"
#include "room_outbox/hook.h"
#include "room_outbox/options.h"

namespace room_outbox::relay {

// How rows of one room relate in time.
enum class Ordering {
  // At most one row of a room in flight; a failed row is not overtaken by later rows of its room.
  kPerRoom,
  // No order between rows; every claimed row may be in flight at once.
  kNone,
};

enum class LogFormat {
  kText,  // message key=value key="value with spaces"
  kJson,  // one JSON object per line
};

// lease >= publish_timeout + kLeaseMargin: a claim must hold one wave (each row bounded by
// publish_timeout) plus 2s: the worker keeps 1s at the end of a lease free for writing the
// wave's results (WorkerOptions::lease_margin), and 1s covers the claim's own round trip and a
// wave that returns a little after its timeout. A shorter lease would give every claim back
// unsent.
inline constexpr std::chrono::milliseconds kLeaseMargin{2000};

// The most IM requests the relay's publisher runs at once: TencentImPublisher's pool of easy
// handles (kMaxPoolSize in hook/src/tencent/tencent_im_publisher.cc). A larger max_in_flight
// would queue a wave's rows behind each other, so one wave could take several
// publish_timeouts and outlive the lease sized for one.
inline constexpr size_t kPublisherMaxInFlight = 64;

// [outbox_worker]: the seed's five keys with the seed's defaults, plus the delivery-at-scale keys.
struct WorkerConfig {
  bool enabled = true;
  std::chrono::milliseconds poll_interval{1000};
  size_t batch_size = 100;
  std::chrono::milliseconds publish_timeout{3000};
  // "" is read as "fixed_interval", the only strategy of V1.
  std::string retry_strategy = "fixed_interval";
  // Rows published at once, at most kPublisherMaxInFlight. 16 keeps a 20-40 ms IM round trip well above the 200/s API budget
  // while holding few connections; 1 is the seed's one-row-at-a-time behaviour.
  size_t max_in_flight = 16;
  Ordering ordering = Ordering::kPerRoom;
  // How long a claim holds its rows. At least publish_timeout + kLeaseMargin, so a claimed row
  // can be tried and marked; 30s leaves room for several waves of a batch, and a crashed relay's
  // rows are due again within half a minute.
  std::chrono::milliseconds lease{30000};
  // Minimum gap between two sends to one room: 50ms = 20 msg/s per room, half of Tencent IM's
  // 40 msg/s per-group cap, leaving room for the hook's sync publishes. 0 disables the pacing.
  // At most poll_interval (a claim cuts a paced room at poll_interval / room_min_interval rows).
  std::chrono::milliseconds room_min_interval{50};
  // --- park policy (issue 9) ---
  // Park a row after this many attempts that failed with a permanent outcome (the publisher's
  // permanent class, an undecodable envelope, a body over the limit); 0 = never (the seed's
  // unbounded retry). Transient failures are never parked.
  int64_t park_permanent_after = 0;
};

struct LogConfig {
  std::string level = "info";  // trace, debug, info, warn, error
  LogFormat format = LogFormat::kText;
};

struct MetricsConfig {
  // "host:port" for GET /metrics (Prometheus text). Empty: no endpoint.
  std::string listen;
};

struct Config {
  std::string path;     // the file it came from
  std::string node_id;  // default: the host name
  MysqlOptions mysql;
  std::string mysql_password_file;  // as written in the file (resolved path in secret_sources)
  TencentImOptions tencent_im;
  std::string tim_secret_key_file;
  std::chrono::milliseconds hook_sync_publish_timeout{500};  // [hook] sync_publish_timeout
  // [hook] sync_publish: "inline" (default), "background" or "off" (HookOptions::sync_publish).
  SyncPublishMode hook_sync_publish = SyncPublishMode::kInline;
  WorkerConfig outbox_worker;
  LogConfig log;
  MetricsConfig metrics;
  // [wake] socket: absolute path of the unix datagram socket the relay binds so that a hook
  // configured with the same path wakes it when a commit leaves rows for it (WakeSender).
  // "" = off (the relay only polls).
  std::string wake_socket;
};

// Reads, parses and validates the file. Errors are kInvalidArgument ("path:line:col: ...") for bad
// content and kNotFound/kPermissionDenied for an unreadable config or secret file.
Result<Config> LoadConfig(const std::string& path);

// Every name LoadConfig accepts, sorted, spelled as in the file: top-level keys ("node_id"),
// tables ("mysql", "tencent_im.priority_by_type": its keys are free, event types) and the keys
// of each table ("mysql.host"). What the loader asks for, so it cannot miss one (the man page
// test compares it with outbox-relay.toml(5)).
std::vector<std::string> ConfigKeys();

// Checks what the daemon needs beyond a valid file: the IM sdk_app_id and secret key. A config can
// be valid without them (e.g. for the hook), but the relay refuses to start (exit code 2).
Status CheckRunnable(const Config& config);

// The effective config as TOML, every key with its value after defaults and normalization, secrets
// shown as "<redacted>" (set) or "<unset>".
std::string RenderEffectiveConfig(const Config& config);

// True for trace, debug, info, warn, error.
bool IsValidLogLevel(const std::string& level);

}  // namespace room_outbox::relay
