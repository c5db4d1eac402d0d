// Connection settings shared by the hook and outbox-relay. Plain values; secrets are held here
// only after the caller read them from a file or the environment.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "room_outbox/export.h"

namespace room_outbox {

// Which statement set the store sends ([mysql] dialect). kAuto: the set of the server the
// connection reached, read from its handshake (MariaDB 10.6+ or MySQL 8.0.1+; an older server is
// refused at connect). kMariaDb, kMySql: that set whatever the server says (the server's minimum
// version still applies). MariaDB accepts the MySQL set too.
enum class SqlDialect { kAuto, kMariaDb, kMySql };

// "auto", "mariadb", "mysql": the spelling of the config.
ROOM_OUTBOX_EXPORT const char* SqlDialectName(SqlDialect dialect);
// The inverse of SqlDialectName (exact, case-sensitive); nullopt for anything else.
ROOM_OUTBOX_EXPORT std::optional<SqlDialect> ParseSqlDialect(std::string_view name);

// TLS to the database ([mysql] ssl_mode), as MySQL's clients spell it:
//   kDisabled        never
//   kPreferred       when the server offers it, without verifying its certificate; not over a
//                    unix socket (the default)
//   kRequired        always, unverified: a server that offers none is refused before the login
//                    is sent (docs/databases.md, "TLS to the database": what this does not stop)
//   kVerifyCa        always, the certificate chain verified against ssl_ca
//   kVerifyIdentity  always, the chain verified (ssl_ca, else the system's CAs) and the host name
//                    checked against the certificate
enum class SslMode { kDisabled, kPreferred, kRequired, kVerifyCa, kVerifyIdentity };

// "disabled", "preferred", "required", "verify_ca", "verify_identity".
ROOM_OUTBOX_EXPORT const char* SslModeName(SslMode mode);
// The inverse of SslModeName (exact, case-sensitive); nullopt for anything else.
ROOM_OUTBOX_EXPORT std::optional<SslMode> ParseSslMode(std::string_view name);

struct MysqlOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 3306;
  std::string socket;  // when set, a unix socket is used instead of host:port
  std::string user = "room_outbox";
  std::string password;  // secret: never logged
  std::string database = "room_outbox";
  std::chrono::milliseconds connect_timeout{5000};
  SqlDialect dialect = SqlDialect::kAuto;
  SslMode ssl_mode = SslMode::kPreferred;
  // PEM file paths. ssl_ca: the CA certificate(s) the server's certificate must chain to;
  // ssl_cert and ssl_key: a client certificate and its private key (both or neither; the key is a
  // secret: only its path is held here, never its content, and it is never logged).
  std::string ssl_ca;
  std::string ssl_cert;
  std::string ssl_key;
  // The server's RSA public key (PEM path) for caching_sha2_password / sha256_password over a
  // connection without TLS: the password is sent encrypted with it. Empty: such an account needs
  // TLS.
  std::string server_public_key_file;
};

// What Commit does with a committed command's pending rows (`[hook] sync_publish`).
enum class SyncPublishMode {
  // Commit publishes them itself before it returns, in order, all within sync_publish_timeout
  // (the default): kPublished, or kPending for what failed or did not
  // fit.
  kInline,
  // Commit returns right after COMMIT (kQueued); a thread the Hook owns publishes them in commit
  // order per room with the same lease and the same sync_publish_timeout from the commit, and
  // hands what fails or runs out of time to the relay at once.
  kBackground,
  // No sync publish: the rows are written due at once and outbox-relay alone delivers them.
  kOff,
};

// "inline", "background", "off": the config's spelling.
ROOM_OUTBOX_EXPORT const char* SyncPublishModeName(SyncPublishMode mode);
// The inverse of SyncPublishModeName (exact, case-sensitive); nullopt for anything else.
ROOM_OUTBOX_EXPORT std::optional<SyncPublishMode> ParseSyncPublishMode(std::string_view name);

// The default of HookOptions::sync_publish_timeout ([hook]), also applied to a value <= 0 by
// CreateHook and by LoadHookOptions.
inline constexpr std::chrono::milliseconds kDefaultSyncPublishTimeout{500};

// The event types that are never sent to IM; they count as delivered (no-op success).
ROOM_OUTBOX_EXPORT std::vector<std::string> DefaultSkipEventTypes();

// A message's MsgPriority in send_group_msg. Over a group's 40 msg/s cap IM drops lower
// priorities first: system events go High so audience chat (Normal) is
// dropped before them.
enum class MsgPriority { kHigh, kNormal, kLow };

// "High", "Normal", "Low": the spelling IM and the config use.
ROOM_OUTBOX_EXPORT const char* MsgPriorityName(MsgPriority priority);
// The inverse of MsgPriorityName (exact, case-sensitive); nullopt for anything else.
ROOM_OUTBOX_EXPORT std::optional<MsgPriority> ParseMsgPriority(std::string_view name);

// The defaults of TencentImOptions that also replace a value <= 0 (or 0).
inline constexpr std::chrono::milliseconds kDefaultBreakerCooldown{60000};
inline constexpr size_t kDefaultMaxBodyBytes = 12288;
// The most events one send_group_msg message carries (pack_max_events): 1 by default (one event
// per message), at most kMaxPackEvents.
inline constexpr size_t kDefaultPackMaxEvents = 1;
inline constexpr size_t kMaxPackEvents = 100;

struct TencentImOptions {
  // https://<region domain>; plain http is accepted only for loopback hosts.
  std::string endpoint = "https://console.tim.qq.com";
  uint64_t sdk_app_id = 0;
  std::string admin_identifier = "administrator";
  std::string secret_key;  // secret: never logged, never in an error text
  std::chrono::seconds usersig_ttl{86400};
  std::string group_id_prefix;  // IM GroupId = group_id_prefix + room_id
  std::vector<std::string> skip_event_types = DefaultSkipEventTypes();
  std::string ca_file;  // optional CA bundle for TLS peer verification; empty: system default
  // The most requests per second to the IM REST API this process sends (its own cap on its
  // share of app_requests_per_second); 0 disables the budget (no pacing, not a member). Shared
  // by every publisher (every Hook) of the process configured with the same endpoint, app and
  // rate.
  double requests_per_second = 200;
  // The app's REST call limit (Tencent: 200/s), shared through the database by every process
  // that sends to the app (relays, and room-service processes whose hook sends): each takes a
  // share by demand (room_outbox_im_member). 0: no sharing; the process keeps
  // requests_per_second for itself.
  double app_requests_per_second = 200;
  // After an app-wide IM error (bad key, app disabled, ...) no request is sent for this long,
  // then one probe; at least 60 s after 70050. <= 0: kDefaultBreakerCooldown.
  std::chrono::milliseconds breaker_cooldown = kDefaultBreakerCooldown;
  // MsgPriority of every message, unless its event type is in priority_by_type.
  MsgPriority msg_priority = MsgPriority::kHigh;
  std::map<std::string, MsgPriority> priority_by_type;
  // The largest send_group_msg request body the hook's Commit accepts for an event (Tencent's
  // limit is 12 KB); 0: kDefaultMaxBodyBytes.
  size_t max_body_bytes = kDefaultMaxBodyBytes;
  // The proxy every request to IM goes through: "scheme://host:port" with scheme http, https,
  // socks4, socks4a, socks5 or socks5h, no user or password. Empty: none, and the environment's
  // http_proxy, https_proxy, ALL_PROXY and NO_PROXY are ignored.
  std::string proxy;
  // Above 1: up to this many consecutive pending events of one room (in room order) go out as one
  // message in the RoomEventBatch form (docs/relay.md, "Packed events"), the hook packing the
  // events of one command, the relay a room's pending events; 1..kMaxPackEvents, 0 means 1.
  size_t pack_max_events = kDefaultPackMaxEvents;
};

}  // namespace room_outbox
