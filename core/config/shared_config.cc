#include "core/config/shared_config.h"

#include <cmath>
#include <cstdlib>
#include <optional>
#include <string_view>
#include <tuple>
#include <utility>

#include "core/config/duration.h"
#include "core/config/duration_limits.h"
#include "core/config/secrets.h"
#include "core/host_name.h"
#include "core/tencent/tencent_im_publisher.h"
#include "core/wake_path.h"
#include "core/wipe.h"

namespace room_outbox::core {
namespace {

constexpr std::chrono::seconds kMinUsersigTtl{60};

// [mysql] dialect, ssl_mode and the files TLS uses, with the rules between them.
void ReadMysqlDialectAndTls(TableReader& r, SharedConfig& c) {
  MysqlOptions& m = c.mysql;
  if (auto v = r.String("dialect")) {
    if (auto dialect = ParseSqlDialect(*v)) {
      m.dialect = *dialect;
    } else {
      r.SetError(r.NodeOf("dialect"), "dialect",
                 "unknown value \"" + *v + "\" (accepted: \"auto\", \"mariadb\", \"mysql\")");
    }
  }
  if (auto v = r.String("ssl_mode")) {
    if (auto mode = ParseSslMode(*v)) {
      m.ssl_mode = *mode;
    } else {
      r.SetError(r.NodeOf("ssl_mode"), "ssl_mode",
                 "unknown value \"" + *v +
                     "\" (accepted: \"disabled\", \"preferred\", \"required\", \"verify_ca\", "
                     "\"verify_identity\")");
    }
  }
  for (auto [key, target] : {std::pair{"ssl_ca", &m.ssl_ca}, std::pair{"ssl_cert", &m.ssl_cert},
                             std::pair{"ssl_key", &m.ssl_key},
                             std::pair{"server_public_key_file", &m.server_public_key_file}}) {
    if (auto v = r.String(key)) *target = *v;
  }
  if (r.failed()) {
    return;
  }
  const bool verify = m.ssl_mode == SslMode::kVerifyCa || m.ssl_mode == SslMode::kVerifyIdentity;
  if (!m.ssl_ca.empty() && !verify) {
    r.SetError(r.NodeOf("ssl_ca"), "ssl_ca",
               "is used only with ssl_mode \"verify_ca\" or \"verify_identity\", not \"" +
                   std::string(SslModeName(m.ssl_mode)) + "\"");
  } else if (m.ssl_ca.empty() && m.ssl_mode == SslMode::kVerifyCa) {
    r.SetError(r.NodeOf("ssl_mode"), "ssl_mode",
               "\"verify_ca\" needs ssl_ca (the CA certificate file the server's must chain to)");
  } else if (m.ssl_cert.empty() != m.ssl_key.empty()) {
    const char* set = m.ssl_cert.empty() ? "ssl_key" : "ssl_cert";
    r.SetError(r.NodeOf(set), set, "ssl_cert and ssl_key (a client certificate) go together");
  } else if (!m.ssl_cert.empty() && m.ssl_mode == SslMode::kDisabled) {
    r.SetError(r.NodeOf("ssl_cert"), "ssl_cert", "is not used with ssl_mode \"disabled\"");
  }
}

void ReadMysql(TableReader& r, SharedConfig& c) {
  if (auto v = r.String("host")) c.mysql.host = *v;
  if (auto v = r.Integer("port")) {
    if (*v < 1 || *v > 65535) {
      r.SetError(r.NodeOf("port"), "port", "must be 1..65535, got " + std::to_string(*v));
    } else {
      c.mysql.port = static_cast<uint16_t>(*v);
    }
  }
  if (auto v = r.String("socket")) c.mysql.socket = *v;
  if (auto v = r.String("user")) c.mysql.user = *v;
  if (auto v = r.String("password_file")) c.mysql_password_file = *v;
  if (auto v = r.String("database")) c.mysql.database = *v;
  r.PositiveDuration("connect_timeout", &c.mysql.connect_timeout, kMaxConnectTimeout.max);
  ReadMysqlDialectAndTls(r, c);
  r.CheckUnknown();
}

// The [tencent_im.priority_by_type] table: event_type -> "High" | "Normal" | "Low".
void ReadPriorityByType(TableReader& r, TencentImOptions& t, const std::string& accepted) {
  const toml::table* by_type = r.Table("priority_by_type");
  if (by_type == nullptr || r.failed()) {
    return;
  }
  for (auto&& [type, node] : *by_type) {
    const std::string key = "priority_by_type." + std::string(type.str());
    const auto* value = node.as_string();
    std::optional<MsgPriority> p;
    if (value != nullptr) {
      p = ParseMsgPriority(value->get());
    }
    if (!p) {
      const std::string what =
          value != nullptr ? "unknown value \"" + value->get() + "\"" : "expected a string";
      r.SetError(&node, key, what + accepted);
      return;
    }
    t.priority_by_type[std::string(type.str())] = *p;
  }
}

// The keys of the failure scopes, priorities and limits: breaker_cooldown, max_body_bytes,
// pack_max_events, msg_priority, priority_by_type.
void ReadTencentImDelivery(TableReader& r, TencentImOptions& t) {
  r.PositiveDuration("breaker_cooldown", &t.breaker_cooldown, kMaxBreakerCooldown.max);
  if (auto v = r.Integer("max_body_bytes"); v && *v > 0) {
    t.max_body_bytes = static_cast<size_t>(*v);
  }
  if (auto v = r.Integer("pack_max_events")) {
    if (*v < 1 || *v > static_cast<int64_t>(kMaxPackEvents)) {
      r.SetError(r.NodeOf("pack_max_events"), "pack_max_events",
                 "must be 1.." + std::to_string(kMaxPackEvents) + ", got " + std::to_string(*v));
    } else {
      t.pack_max_events = static_cast<size_t>(*v);
    }
  }
  const std::string accepted = " (accepted: \"High\", \"Normal\", \"Low\")";
  if (auto v = r.String("msg_priority")) {
    if (auto p = ParseMsgPriority(*v)) {
      t.msg_priority = *p;
    } else {
      r.SetError(r.NodeOf("msg_priority"), "msg_priority",
                 "unknown value \"" + *v + "\"" + accepted);
    }
  }
  ReadPriorityByType(r, t, accepted);
}

// The [tencent_im.max_age_by_type] table: event_type -> a duration > 0 (ParseDuration). A value
// that is not a string, malformed, zero or negative is an error naming the key: unlike the
// "<= 0 means the default" durations there is no default to fall back to.
void ReadMaxAgeByType(TableReader& r, SharedConfig& c) {
  const toml::table* by_type = r.Table("max_age_by_type");
  if (by_type == nullptr || r.failed()) {
    return;
  }
  for (auto&& [type, node] : *by_type) {
    const std::string key = "max_age_by_type." + std::string(type.str());
    if (type.str().empty()) {
      r.SetError(&node, key, "an event type must not be empty");
      return;
    }
    const auto* value = node.as_string();
    if (value == nullptr) {
      r.SetError(&node, key, "expected a duration string such as \"60s\"");
      return;
    }
    auto age = ParseDuration(value->get());
    if (!age) {
      r.SetError(&node, key, age.error().message);
      return;
    }
    if (age->count() <= 0) {
      r.SetError(&node, key,
                 "must be a duration > 0, got \"" + value->get() +
                     "\" (leave the type out for no expiry)");
      return;
    }
    if (*age > kMaxAgeByType.max) {
      r.SetError(&node, key,
                 "must be at most " + FormatDuration(kMaxAgeByType.max) + ", got \"" +
                     value->get() + "\"");
      return;
    }
    c.max_age_by_type[std::string(type.str())] = *age;
  }
}

// A rate key of [tencent_im]: a number, 0 or above (what 0 means is `zero_means`).
void ReadRate(TableReader& r, const char* key, const char* zero_means, double& field) {
  if (auto v = r.Number(key)) {
    if (!std::isfinite(*v)) {
      r.SetError(r.NodeOf(key), key, "must be a finite number of requests per second");
    } else if (*v < 0) {
      r.SetError(r.NodeOf(key), key, std::string("must not be negative (") + zero_means + ")");
    } else {
      field = *v;
    }
  }
}

void ReadTencentImBudget(TableReader& r, TencentImOptions& t) {
  ReadRate(r, "requests_per_second", "0 disables the budget", t.requests_per_second);
  ReadRate(r, "app_requests_per_second", "0: no budget shared with other processes",
           t.app_requests_per_second);
}

void ReadEndpoint(TableReader& r, TencentImOptions& t) {
  if (auto v = r.String("endpoint")) t.endpoint = *v;
  if (r.failed()) {
    return;
  }
  auto endpoint = NormalizeImEndpoint(t.endpoint);
  if (!endpoint) {
    r.SetError(r.NodeOf("endpoint"), "endpoint", endpoint.error().message);
  } else {
    t.endpoint = *endpoint;
  }
}

void ReadTencentIm(TableReader& r, SharedConfig& c) {
  TencentImOptions& t = c.tencent_im;
  ReadEndpoint(r, t);
  if (auto v = r.Integer("sdk_app_id")) {
    if (*v < 0) {
      r.SetError(r.NodeOf("sdk_app_id"), "sdk_app_id", "must not be negative");
    } else {
      t.sdk_app_id = static_cast<uint64_t>(*v);
    }
  }
  if (auto v = r.String("admin_identifier")) t.admin_identifier = *v;
  if (auto v = r.String("secret_key_file")) c.tim_secret_key_file = *v;
  if (auto v = r.Duration("usersig_ttl")) {
    if (v->count() > 0 && *v < kMinUsersigTtl) {
      r.SetError(r.NodeOf("usersig_ttl"), "usersig_ttl",
                 "must be at least 1m (a UserSig is cached until shortly before it expires)");
    } else if (v->count() > 0 && r.CheckAtMost("usersig_ttl", *v, kMaxUsersigTtl.max)) {
      t.usersig_ttl = std::chrono::duration_cast<std::chrono::seconds>(*v);
    }
  }
  if (auto v = r.String("group_id_prefix")) t.group_id_prefix = *v;
  if (auto v = r.StringArray("skip_event_types")) t.skip_event_types = *v;
  if (auto v = r.String("ca_file")) t.ca_file = *v;
  if (auto v = r.String("proxy")) {
    if (auto checked = CheckImProxy(*v); !checked) {
      r.SetError(r.NodeOf("proxy"), "proxy", checked.error().message);
    } else {
      t.proxy = *v;
    }
  }
  ReadTencentImBudget(r, t);
  ReadTencentImDelivery(r, t);
  ReadMaxAgeByType(r, c);
  r.CheckUnknown();
}

void ReadHook(TableReader& r, SharedConfig& c) {
  r.PositiveDuration("sync_publish_timeout", &c.hook.sync_publish_timeout,
                     kMaxSyncPublishTimeout.max);
  if (auto v = r.String("sync_publish")) {
    if (auto mode = ParseSyncPublishMode(*v)) {
      c.hook.sync_publish = *mode;
    } else {
      r.SetError(r.NodeOf("sync_publish"), "sync_publish",
                 "unknown value \"" + *v + "\" (accepted: \"inline\", \"background\", \"off\")");
    }
  }
  r.CheckUnknown();
}

}  // namespace

void ReadWakeSocket(TableReader& r, SharedConfig& c) {
  if (auto v = r.String("socket")) {
    if (std::string why = CheckWakeSocketPath(*v); !why.empty()) {
      r.SetError(r.NodeOf("socket"), "socket", why);
    }
    c.wake_socket = *v;
  }
}

void ReadOrdering(TableReader& r, SharedConfig& c) {
  if (auto v = r.String("ordering")) {
    if (*v == "per_room") {
      c.per_room_order = true;
    } else if (*v == "none") {
      c.per_room_order = false;
    } else {
      r.SetError(r.NodeOf("ordering"), "ordering",
                 "unknown value \"" + *v + "\" (accepted: \"per_room\", \"none\")");
    }
  }
}

void ReadSharedSections(TableReader& top, SharedConfig& config) {
  if (auto v = top.String("node_id")) config.node_id = *v;
  struct Section {
    const char* name;
    void (*read)(TableReader&, SharedConfig&);
  };
  for (const Section& s : {Section{"mysql", ReadMysql}, Section{"tencent_im", ReadTencentIm},
                           Section{"hook", ReadHook}}) {
    TableReader r = top.Section(s.name);
    s.read(r, config);
  }
}

Result<void> LoadSharedSecretsAndDefaults(SharedConfig& c, SecretUse use) {
  // The environment wins over the file, as for the secrets: a Kubernetes pod passes its name
  // through the downward API.
  if (const char* env = std::getenv(kNodeIdEnv); env != nullptr && *env != '\0') {
    c.node_id = env;
  }
  if (c.node_id.empty()) {
    c.node_id = HostName();
  }
  for (auto [key, path, rule] : {std::tuple{"mysql.ssl_ca", &c.mysql.ssl_ca, FileRule::kPublic},
                                 std::tuple{"mysql.ssl_cert", &c.mysql.ssl_cert, FileRule::kPublic},
                                 std::tuple{"mysql.ssl_key", &c.mysql.ssl_key, FileRule::kSecret},
                                 std::tuple{"mysql.server_public_key_file",
                                            &c.mysql.server_public_key_file, FileRule::kPublic}}) {
    auto resolved = ResolveReadableFile(key, *path, c.path, rule, &c.warnings);
    if (!resolved) {
      return Fail(resolved.error());
    }
    *path = std::move(*resolved);
  }
  auto password = LoadSecret("mysql.password_file", c.mysql_password_file, kMysqlPasswordEnv,
                             c.path, &c.warnings);
  if (!password) {
    return Fail(password.error());
  }
  ReplaceSecret(c.mysql.password, std::move(*password));
  if (use == SecretUse::kAll) {
    auto key = LoadSecret("tencent_im.secret_key_file", c.tim_secret_key_file, kTimSecretKeyEnv,
                          c.path, &c.warnings);
    if (!key) {
      return Fail(key.error());
    }
    ReplaceSecret(c.tencent_im.secret_key, std::move(*key));
  }
  return {};
}

}  // namespace room_outbox::core
