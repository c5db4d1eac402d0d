// RenderEffectiveConfig (config.h): the effective config as TOML.
#include <cstdio>
#include <ostream>
#include <sstream>
#include <string_view>

#include "config/config.h"
#include "core/config/duration.h"
#include "core/mysql/connect_options.h"

namespace room_outbox::relay {
namespace {

// TOML basic string with the escapes TOML requires.
std::string Quote(std::string_view s) {
  std::string out = "\"";
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (ch) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20 || c == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", c);
          out += buf;
        } else {
          out += ch;
        }
    }
  }
  return out + "\"";
}

std::string Secret(const std::string& value) { return value.empty() ? "<unset>" : "<redacted>"; }

// Who may send to a socket file of `mode` (a sender needs write permission on it).
const char* WhoMayWake(mode_t mode) {
  if ((mode & 0002) != 0) return "any local user may wake the relay";
  if ((mode & 0020) != 0) return "the relay's user and the file's group may wake the relay";
  if ((mode & 0200) != 0) return "only the relay's user may wake the relay";
  return "nobody may wake the relay (no write permission)";
}

void RenderMysql(const Config& c, std::ostream& o) {
  o << "[mysql]\n"
    << "host = " << Quote(c.mysql.host) << "\n"
    << "port = " << c.mysql.port << "\n"
    << "socket = " << Quote(c.mysql.socket) << "\n"
    << "user = " << Quote(c.mysql.user) << "\n"
    << "password_file = " << Quote(c.mysql_password_file) << "\n"
    << "# password = " << Quote(Secret(c.mysql.password)) << "\n"
    << "database = " << Quote(c.mysql.database) << "\n"
    << "connect_timeout = " << Quote(core::FormatDuration(c.mysql.connect_timeout)) << "\n"
    << "dialect = " << Quote(SqlDialectName(c.mysql.dialect)) << "\n"
    << "ssl_mode = " << Quote(SslModeName(c.mysql.ssl_mode)) << "\n"
    << "# ssl_mode " << SslModeName(c.mysql.ssl_mode) << ": "
    << core::SslModeProtection(c.mysql.ssl_mode) << "\n"
    << "ssl_ca = " << Quote(c.mysql.ssl_ca) << "\n"
    << "ssl_cert = " << Quote(c.mysql.ssl_cert) << "\n"
    << "ssl_key = " << Quote(c.mysql.ssl_key) << "\n"
    << "server_public_key_file = " << Quote(c.mysql.server_public_key_file) << "\n\n";
}

void RenderOutboxWorker(const WorkerConfig& w, std::ostream& o) {
  o << "[outbox_worker]\n"
    << "enabled = " << (w.enabled ? "true" : "false") << "\n"
    << "poll_interval = " << Quote(core::FormatDuration(w.poll_interval)) << "\n"
    << "batch_size = " << w.batch_size << "\n"
    << "publish_timeout = " << Quote(core::FormatDuration(w.publish_timeout)) << "\n"
    << "retry_strategy = " << Quote(w.retry_strategy) << "\n"
    << "max_in_flight = " << w.max_in_flight << "\n"
    << "ordering = " << Quote(w.ordering == Ordering::kPerRoom ? "per_room" : "none") << "\n"
    << "lease = " << Quote(core::FormatDuration(w.lease)) << "\n"
    << "room_min_interval = " << Quote(core::FormatDuration(w.room_min_interval)) << "\n"
    << "park_permanent_after = " << w.park_permanent_after << "\n\n";
}

void RenderTencentIm(const Config& c, std::ostream& o) {
  const TencentImOptions& t = c.tencent_im;
  o << "[tencent_im]\n"
    << "endpoint = " << Quote(t.endpoint) << "\n"
    << "sdk_app_id = " << t.sdk_app_id << "\n"
    << "admin_identifier = " << Quote(t.admin_identifier) << "\n"
    << "secret_key_file = " << Quote(c.tim_secret_key_file) << "\n"
    << "# secret_key = " << Quote(Secret(t.secret_key)) << "\n"
    << "usersig_ttl = "
    << Quote(core::FormatDuration(
           std::chrono::duration_cast<std::chrono::milliseconds>(t.usersig_ttl)))
    << "\n"
    << "group_id_prefix = " << Quote(t.group_id_prefix) << "\n"
    << "skip_event_types = [";
  for (size_t i = 0; i < t.skip_event_types.size(); ++i) {
    o << (i == 0 ? "" : ", ") << Quote(t.skip_event_types[i]);
  }
  o << "]\n"
    << "requests_per_second = " << t.requests_per_second << "\n"
    << "app_requests_per_second = " << t.app_requests_per_second << "\n"
    << "ca_file = " << Quote(t.ca_file) << "\n"
    << "proxy = " << Quote(t.proxy) << "\n"
    << "breaker_cooldown = " << Quote(core::FormatDuration(t.breaker_cooldown)) << "\n"
    << "max_body_bytes = " << t.max_body_bytes << "\n"
    << "pack_max_events = " << t.pack_max_events << "\n"
    << "msg_priority = " << Quote(MsgPriorityName(t.msg_priority)) << "\n\n";
  o << "[tencent_im.priority_by_type]\n";
  for (const auto& [type, priority] : t.priority_by_type) {
    o << Quote(type) << " = " << Quote(MsgPriorityName(priority)) << "\n";
  }
  o << "\n";
  o << "[tencent_im.max_age_by_type]\n";
  if (c.max_age_by_type.empty()) {
    o << "# empty: no expiry, every event is retried until it is sent\n";
  }
  for (const auto& [type, age] : c.max_age_by_type) {
    o << Quote(type) << " = " << Quote(core::FormatDuration(age)) << "\n";
  }
  o << "\n";
}

// [hook], [log], [metrics] and [wake].
void RenderTheRest(const Config& c, std::ostream& o) {
  o << "[hook]\n"
    << "sync_publish_timeout = " << Quote(core::FormatDuration(c.hook.sync_publish_timeout)) << "\n"
    << "sync_publish = " << Quote(SyncPublishModeName(c.hook.sync_publish)) << "\n\n";
  o << "[log]\n"
    << "level = " << Quote(c.log.level) << "\n"
    << "format = " << Quote(c.log.format == LogFormat::kJson ? "json" : "text") << "\n\n";
  o << "[metrics]\n"
    << "listen = " << Quote(c.metrics.listen) << "\n\n";
  o << "[wake]\n"
    << "socket = " << Quote(c.wake_socket) << "\n"
    << "min_interval = " << Quote(core::FormatDuration(c.wake.min_interval)) << "\n"
    << "socket_mode = " << Quote(FormatSocketMode(c.wake.socket_mode)) << "\n";
  if (!c.wake_socket.empty()) {
    o << "# the socket file gets mode " << FormatSocketMode(c.wake.socket_mode) << ": "
      << WhoMayWake(c.wake.socket_mode) << "\n";
  }
}

}  // namespace

std::string FormatSocketMode(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof(text), "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

std::string RenderEffectiveConfig(const Config& c) {
  std::ostringstream o;
  o << "# effective configuration of " << c.path << " (secrets redacted)\n";
  o << "node_id = " << Quote(c.node_id) << "\n\n";
  RenderMysql(c, o);
  RenderOutboxWorker(c.outbox_worker, o);
  RenderTencentIm(c, o);
  RenderTheRest(c, o);
  return o.str();
}

}  // namespace room_outbox::relay
