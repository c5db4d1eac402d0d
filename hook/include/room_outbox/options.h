// Connection settings shared by the hook and outbox-relay. Plain values; secrets are held here
// only after the caller read them from a file or the environment.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

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
std::vector<std::string> DefaultSkipEventTypes();

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
  // Requests per second to the IM REST API across this process; 0 disables the budget.
  double requests_per_second = 200;
};

}  // namespace room_outbox
