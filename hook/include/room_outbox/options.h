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

struct MysqlOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 3306;
  std::string socket;    // when set, a unix socket is used instead of host:port
  std::string user = "room_outbox";
  std::string password;  // secret: never logged
  std::string database = "room_outbox";
  std::chrono::milliseconds connect_timeout{5000};
};

// The event types that are never sent to IM; they count as delivered (no-op success).
ROOM_OUTBOX_EXPORT std::vector<std::string> DefaultSkipEventTypes();

// A message's MsgPriority in send_group_msg. Over a group's 40 msg/s cap IM drops lower
// priorities first (TENCENT_IM.md §9.2): system events go High so audience chat (Normal) is
// dropped before them.
enum class MsgPriority { kHigh, kNormal, kLow };

// "High", "Normal", "Low": the spelling IM and the config use.
ROOM_OUTBOX_EXPORT const char* MsgPriorityName(MsgPriority priority);
// The inverse of MsgPriorityName (exact, case-sensitive); nullopt for anything else.
ROOM_OUTBOX_EXPORT std::optional<MsgPriority> ParseMsgPriority(std::string_view name);

// The defaults of TencentImOptions that also replace a value <= 0 (or 0).
inline constexpr std::chrono::milliseconds kDefaultBreakerCooldown{60000};
inline constexpr size_t kDefaultMaxBodyBytes = 12288;

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
  // Requests per second to the IM REST API across this process; 0 disables the budget. Shared
  // by every publisher (every Hook) of the process configured with the same endpoint, app and
  // rate; relays have their own. Divide the app's budget between processes yourself.
  double requests_per_second = 200;
  // After an app-wide IM error (bad key, app disabled, ...) no request is sent for this long,
  // then one probe; at least 60 s after 70050. <= 0: kDefaultBreakerCooldown.
  std::chrono::milliseconds breaker_cooldown = kDefaultBreakerCooldown;
  // MsgPriority of every message, unless its event type is in priority_by_type.
  MsgPriority msg_priority = MsgPriority::kHigh;
  std::map<std::string, MsgPriority> priority_by_type;
  // The largest send_group_msg request body the hook's Commit accepts for an event (Tencent's
  // limit is 12 KB); 0: kDefaultMaxBodyBytes.
  size_t max_body_bytes = kDefaultMaxBodyBytes;
};

}  // namespace room_outbox
