#include "config.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <optional>
#include <set>
#include <sstream>
#include <string_view>
#include <toml++/toml.h>

#include "duration.h"
#include "input_limits.h"
#include "tencent/tencent_im_publisher.h"
#include "wake_sender.h"

namespace room_outbox::relay {
namespace {

constexpr int64_t kMaxBatchSize = 10000;   // a claim larger than this is a config mistake
constexpr std::chrono::seconds kMinUsersigTtl{60};

std::string DefaultNodeId() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0 || name[0] == '\0') {
    return "unknown-host";
  }
  return name;
}

// Reads one TOML table. Each accessor records its key as known (present or not), so that
// CheckUnknown can report every other key. The first error wins; later calls are no-ops.
class TableReader {
 public:
  TableReader(const toml::table* table, std::string prefix, const std::string& path,
              std::optional<Error>* error)
      : table_(table), prefix_(std::move(prefix)), path_(path), error_(error) {}

  std::string Where(const toml::source_region& source) const {
    if (source.begin.line == 0) {
      return path_;
    }
    return path_ + ":" + std::to_string(source.begin.line) + ":" +
           std::to_string(source.begin.column);
  }
  std::string Name(std::string_view key) const {
    return prefix_.empty() ? std::string(key) : prefix_ + "." + std::string(key);
  }
  bool failed() const { return error_->has_value(); }
  // The dotted names of the keys asked for so far, present or not.
  std::vector<std::string> KnownNames() const {
    std::vector<std::string> names;
    for (const std::string& key : known_) names.push_back(Name(key));
    return names;
  }
  void SetError(const toml::node* node, std::string_view key, const std::string& what) {
    if (failed()) {
      return;
    }
    std::string where = node != nullptr ? Where(node->source()) : path_;
    *error_ = Error{ErrorCode::kInvalidArgument, where + ": " + Name(key) + ": " + what};
  }

  const toml::node* Get(std::string_view key) {
    known_.insert(std::string(key));
    if (table_ == nullptr || failed()) {
      return nullptr;
    }
    return table_->get(key);
  }

  // Each returns the value when present and well typed; otherwise nullopt (with an error set
  // when present but ill typed).
  std::optional<std::string> String(std::string_view key) {
    const toml::node* node = Get(key);
    if (node == nullptr) {
      return std::nullopt;
    }
    if (const auto* v = node->as_string()) {
      return v->get();
    }
    SetError(node, key, "expected a string");
    return std::nullopt;
  }
  std::optional<int64_t> Integer(std::string_view key) {
    const toml::node* node = Get(key);
    if (node == nullptr) {
      return std::nullopt;
    }
    if (const auto* v = node->as_integer()) {
      return v->get();
    }
    SetError(node, key, "expected an integer");
    return std::nullopt;
  }
  std::optional<double> Number(std::string_view key) {
    const toml::node* node = Get(key);
    if (node == nullptr) {
      return std::nullopt;
    }
    if (const auto* v = node->as_integer()) {
      return static_cast<double>(v->get());
    }
    if (const auto* v = node->as_floating_point()) {
      return v->get();
    }
    SetError(node, key, "expected a number");
    return std::nullopt;
  }
  std::optional<bool> Bool(std::string_view key) {
    const toml::node* node = Get(key);
    if (node == nullptr) {
      return std::nullopt;
    }
    if (const auto* v = node->as_boolean()) {
      return v->get();
    }
    SetError(node, key, "expected true or false");
    return std::nullopt;
  }
  std::optional<std::chrono::milliseconds> Duration(std::string_view key) {
    const toml::node* node = Get(key);
    if (node == nullptr) {
      return std::nullopt;
    }
    const auto* v = node->as_string();
    if (v == nullptr) {
      SetError(node, key, "expected a duration string such as \"500ms\", \"3s\", \"2m\", \"24h\"");
      return std::nullopt;
    }
    auto parsed = ParseDuration(v->get());
    if (!parsed) {
      SetError(node, key, parsed.error().message);
      return std::nullopt;
    }
    return *parsed;
  }
  std::optional<std::vector<std::string>> StringArray(std::string_view key) {
    const toml::node* node = Get(key);
    if (node == nullptr) {
      return std::nullopt;
    }
    const auto* array = node->as_array();
    if (array == nullptr) {
      SetError(node, key, "expected an array of strings");
      return std::nullopt;
    }
    std::vector<std::string> out;
    for (const toml::node& item : *array) {
      const auto* s = item.as_string();
      if (s == nullptr) {
        SetError(&item, key, "expected an array of strings");
        return std::nullopt;
      }
      out.push_back(s->get());
    }
    return out;
  }
  // A sub-table; null when absent (its keys then take their defaults).
  const toml::table* Table(std::string_view key) {
    const toml::node* node = Get(key);
    if (node == nullptr) {
      return nullptr;
    }
    if (const auto* t = node->as_table()) {
      return t;
    }
    SetError(node, key, "expected a table [" + Name(key) + "]");
    return nullptr;
  }
  // The node of `key` for positions in value errors (null when absent).
  const toml::node* NodeOf(std::string_view key) const {
    return table_ == nullptr ? nullptr : table_->get(key);
  }

  void CheckUnknown() {
    if (table_ == nullptr || failed()) {
      return;
    }
    for (auto&& [key, node] : *table_) {
      if (known_.count(std::string(key.str())) == 0) {
        *error_ = Error{ErrorCode::kInvalidArgument,
                        Where(key.source()) + ": unknown key '" + Name(key.str()) + "'"};
        return;
      }
    }
  }

 private:
  const toml::table* table_;
  std::string prefix_;
  const std::string& path_;
  std::optional<Error>* error_;
  std::set<std::string> known_;
};

Result<void> CheckListen(const std::string& listen) {
  const size_t colon = listen.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == listen.size()) {
    return Fail(ErrorCode::kInvalidArgument,
                "\"" + listen + "\" is not host:port (e.g. \"127.0.0.1:9464\")");
  }
  const std::string port = listen.substr(colon + 1);
  if (port.find_first_not_of("0123456789") != std::string::npos || port.size() > 5 ||
      std::stoi(port) < 1 || std::stoi(port) > 65535) {
    return Fail(ErrorCode::kInvalidArgument, "port in \"" + listen + "\" is not 1..65535");
  }
  return {};
}

// Resolves a secret file name: absolute as is; relative against $CREDENTIALS_DIRECTORY when
// systemd provides one, else against the config file's directory.
std::filesystem::path ResolveSecretPath(const std::string& name, const std::string& config_path) {
  std::filesystem::path p(name);
  if (p.is_absolute()) {
    return p;
  }
  const char* creds = std::getenv("CREDENTIALS_DIRECTORY");
  if (creds != nullptr && creds[0] != '\0') {
    return std::filesystem::path(creds) / p;
  }
  return std::filesystem::path(config_path).parent_path() / p;
}

// Reads a secret file. The error names the key and the path; the content never appears.
Result<std::string> ReadSecretFile(const std::string& key, const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int err = errno;
    return Fail(ErrorCode::kInvalidArgument, key + ": cannot read \"" + path.string() + "\": " +
                                                 (err != 0 ? std::strerror(err) : "open failed"));
  }
  auto content = ReadBounded(in, kMaxSecretBytes, key + ": \"" + path.string() + "\"");
  return content ? CheckSecretContent(key + ": \"" + path.string() + "\"", std::move(*content))
                 : content;
}

// Environment wins over the file (see config.h).
Result<std::string> LoadSecret(const std::string& key, const std::string& file,
                               const char* env_name, const std::string& config_path) {
  std::string secret;
  if (!file.empty()) {
    auto read = ReadSecretFile(key, ResolveSecretPath(file, config_path));
    if (!read) {
      return read;
    }
    secret = std::move(*read);
  }
  const char* env = std::getenv(env_name);
  if (env != nullptr && env[0] != '\0') {
    secret = env;
  }
  return secret;
}

template <class Rep, class Period>
void DefaultIfNotPositive(std::optional<std::chrono::duration<Rep, Period>> value,
                          std::chrono::milliseconds* out) {
  if (value && value->count() > 0) {
    *out = std::chrono::duration_cast<std::chrono::milliseconds>(*value);
  }
}

void ReadMysql(TableReader& r, Config& c) {
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
  DefaultIfNotPositive(r.Duration("connect_timeout"), &c.mysql.connect_timeout);
  r.CheckUnknown();
}

// The node of `key`, else of `fallback` (a rule broken by a default points at the key set).
const toml::node* NodeOrFallback(const TableReader& r, std::string_view key,
                                 std::string_view fallback) {
  const toml::node* node = r.NodeOf(key);
  return node != nullptr ? node : r.NodeOf(fallback);
}

// Rules between [outbox_worker] durations that a claim needs to make progress (after defaults).
void CheckWorkerTimes(TableReader& r, const WorkerConfig& w) {
  if (r.failed()) {
    return;
  }
  if (w.lease < w.publish_timeout + kLeaseMargin) {
    r.SetError(NodeOrFallback(r, "lease", "publish_timeout"), "lease",
               FormatDuration(w.lease) + " must be at least publish_timeout (" +
                   FormatDuration(w.publish_timeout) + ") + " + FormatDuration(kLeaseMargin) +
                   " = " + FormatDuration(w.publish_timeout + kLeaseMargin) +
                   ", so a claim holds one wave and the marking of its results");
    return;
  }
  if (w.room_min_interval > w.poll_interval) {
    r.SetError(NodeOrFallback(r, "room_min_interval", "poll_interval"), "room_min_interval",
               FormatDuration(w.room_min_interval) + " must not exceed poll_interval (" +
                   FormatDuration(w.poll_interval) +
                   "): a claim sends a paced room poll_interval / room_min_interval rows");
  }
}

void ReadWorker(TableReader& r, Config& c) {
  WorkerConfig& w = c.outbox_worker;
  if (auto v = r.Bool("enabled")) w.enabled = *v;
  DefaultIfNotPositive(r.Duration("poll_interval"), &w.poll_interval);
  if (auto v = r.Integer("batch_size")) {
    if (*v > kMaxBatchSize) {
      r.SetError(r.NodeOf("batch_size"), "batch_size",
                 "must be at most " + std::to_string(kMaxBatchSize) + ", got " +
                     std::to_string(*v));
    } else if (*v > 0) {
      w.batch_size = static_cast<size_t>(*v);
    }
  }
  DefaultIfNotPositive(r.Duration("publish_timeout"), &w.publish_timeout);
  if (auto v = r.String("retry_strategy")) {
    if (v->empty() || *v == "fixed_interval") {
      w.retry_strategy = "fixed_interval";
    } else {
      r.SetError(r.NodeOf("retry_strategy"), "retry_strategy",
                 "unknown value \"" + *v + "\" (accepted: \"fixed_interval\" or empty)");
    }
  }
  if (auto v = r.Integer("max_in_flight")) {
    if (*v > static_cast<int64_t>(kPublisherMaxInFlight)) {
      r.SetError(r.NodeOf("max_in_flight"), "max_in_flight",
                 std::to_string(*v) + " is above what the IM publisher runs at once (" +
                     std::to_string(kPublisherMaxInFlight) + " requests): must be at most " +
                     std::to_string(kPublisherMaxInFlight));
    } else if (*v > 0) {
      w.max_in_flight = static_cast<size_t>(*v);
    }
  }
  if (auto v = r.String("ordering")) {
    if (*v == "per_room") {
      w.ordering = Ordering::kPerRoom;
    } else if (*v == "none") {
      w.ordering = Ordering::kNone;
    } else {
      r.SetError(r.NodeOf("ordering"), "ordering",
                 "unknown value \"" + *v + "\" (accepted: \"per_room\", \"none\")");
    }
  }
  DefaultIfNotPositive(r.Duration("lease"), &w.lease);
  if (auto v = r.Duration("room_min_interval")) {
    // 0 is meaningful here (no pacing); only a negative value falls back to the default.
    if (v->count() >= 0) {
      w.room_min_interval = *v;
    }
  }
  // --- park policy (issue 9) ---
  if (auto v = r.Integer("park_permanent_after")) {
    if (*v < 0) {
      r.SetError(r.NodeOf("park_permanent_after"), "park_permanent_after",
                 "must be >= 0 (0 = never park), got " + std::to_string(*v));
    } else {
      w.park_permanent_after = *v;
    }
  }
  CheckWorkerTimes(r, w);
  r.CheckUnknown();
}

// [tencent_im] keys of the failure scopes, priorities and limits (issue 8): breaker_cooldown,
// max_body_bytes, msg_priority and the [tencent_im.priority_by_type] table (event_type -> "High" | "Normal" |
// "Low"; anything else is an error naming the key).
void ReadTencentImDelivery(TableReader& r, TencentImOptions& t) {
  DefaultIfNotPositive(r.Duration("breaker_cooldown"), &t.breaker_cooldown);
  // The hook's commit-time limit on an event's request body; <= 0: the default (12288).
  if (auto v = r.Integer("max_body_bytes"); v && *v > 0) {
    t.max_body_bytes = static_cast<size_t>(*v);
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

void ReadTencentIm(TableReader& r, Config& c) {
  TencentImOptions& t = c.tencent_im;
  if (auto v = r.String("endpoint")) t.endpoint = *v;
  if (!r.failed()) {
    auto endpoint = NormalizeImEndpoint(t.endpoint);
    if (!endpoint) {
      r.SetError(r.NodeOf("endpoint"), "endpoint", endpoint.error().message);
    } else {
      t.endpoint = *endpoint;
    }
  }
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
    } else if (v->count() > 0) {
      t.usersig_ttl = std::chrono::duration_cast<std::chrono::seconds>(*v);
    }
  }
  if (auto v = r.String("group_id_prefix")) t.group_id_prefix = *v;
  if (auto v = r.StringArray("skip_event_types")) t.skip_event_types = *v;
  if (auto v = r.Number("requests_per_second")) {
    if (*v < 0) {
      r.SetError(r.NodeOf("requests_per_second"), "requests_per_second",
                 "must not be negative (0 disables the budget)");
    } else {
      t.requests_per_second = *v;
    }
  }
  if (auto v = r.String("ca_file")) t.ca_file = *v;
  ReadTencentImDelivery(r, t);
  r.CheckUnknown();
}

void ReadHook(TableReader& r, Config& c) {
  DefaultIfNotPositive(r.Duration("sync_publish_timeout"), &c.hook_sync_publish_timeout);
  if (auto v = r.String("sync_publish")) {
    if (auto mode = ParseSyncPublishMode(*v)) {
      c.hook_sync_publish = *mode;
    } else {
      r.SetError(r.NodeOf("sync_publish"), "sync_publish",
                 "unknown value \"" + *v + "\" (accepted: \"inline\", \"background\", \"off\")");
    }
  }
  r.CheckUnknown();
}

void ReadLog(TableReader& r, Config& c) {
  if (auto v = r.String("level")) {
    if (!IsValidLogLevel(*v)) {
      r.SetError(r.NodeOf("level"), "level",
                 "unknown value \"" + *v + "\" (accepted: trace, debug, info, warn, error)");
    } else {
      c.log.level = *v;
    }
  }
  if (auto v = r.String("format")) {
    if (*v == "text") {
      c.log.format = LogFormat::kText;
    } else if (*v == "json") {
      c.log.format = LogFormat::kJson;
    } else {
      r.SetError(r.NodeOf("format"), "format",
                 "unknown value \"" + *v + "\" (accepted: text, json)");
    }
  }
  r.CheckUnknown();
}

void ReadMetrics(TableReader& r, Config& c) {
  if (auto v = r.String("listen")) {
    if (!v->empty()) {
      auto ok = CheckListen(*v);
      if (!ok) {
        r.SetError(r.NodeOf("listen"), "listen", ok.error().message);
      }
    }
    c.metrics.listen = *v;
  }
  r.CheckUnknown();
}

// [wake] socket: checked as the hook checks it (WakeSender::Check).
void ReadWake(TableReader& r, Config& c) {
  if (auto v = r.String("socket")) {
    if (std::string why = WakeSender::Check(*v); !why.empty()) {
      r.SetError(r.NodeOf("socket"), "socket", why);
    }
    c.wake_socket = *v;
  }
  r.CheckUnknown();
}

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

// Reads the top-level keys and every section of `root` (null: an empty file) into `c`; when
// `names` is set, appends the dotted name of every key and table the readers ask for.
void ReadTables(const toml::table* root, const std::string& path, std::optional<Error>* error,
                Config& c, std::vector<std::string>* names) {
  TableReader top(root, "", path, error);
  if (auto v = top.String("node_id")) c.node_id = *v;
  struct Section {
    const char* name;
    void (*read)(TableReader&, Config&);
  };
  for (const Section& s :
       {Section{"mysql", ReadMysql}, Section{"outbox_worker", ReadWorker},
        Section{"tencent_im", ReadTencentIm}, Section{"hook", ReadHook}, Section{"log", ReadLog},
        Section{"metrics", ReadMetrics}, Section{"wake", ReadWake}}) {
    const toml::table* table = top.Table(s.name);
    TableReader r(table, s.name, path, error);
    s.read(r, c);
    if (names != nullptr) {
      for (std::string& name : r.KnownNames()) names->push_back(std::move(name));
    }
  }
  top.CheckUnknown();
  if (names != nullptr) {
    for (std::string& name : top.KnownNames()) names->push_back(std::move(name));
  }
}

}  // namespace

bool IsValidLogLevel(const std::string& level) {
  return level == "trace" || level == "debug" || level == "info" || level == "warn" ||
         level == "error";
}

Result<Config> LoadConfig(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int err = errno;
    return Fail(ErrorCode::kNotFound, "cannot read config \"" + path + "\": " +
                                          (err != 0 ? std::strerror(err) : "open failed"));
  }
  auto text = ReadBounded(in, kMaxConfigBytes, "config \"" + path + "\"");
  if (!text) return Fail(text.error());

  toml::table root;
  try {
    root = toml::parse(*text, path);
  } catch (const toml::parse_error& e) {
    return Fail(ErrorCode::kInvalidArgument,
                path + ":" + std::to_string(e.source().begin.line) + ":" +
                    std::to_string(e.source().begin.column) + ": " +
                    std::string(e.description()));
  }

  Config c;
  c.path = path;
  std::optional<Error> error;
  ReadTables(&root, path, &error, c, nullptr);
  if (error) {
    return Fail(std::move(*error));
  }
  if (c.node_id.empty()) {
    c.node_id = DefaultNodeId();
  }

  auto password =
      LoadSecret("mysql.password_file", c.mysql_password_file, "ROOM_OUTBOX_MYSQL_PASSWORD", path);
  if (!password) {
    return Fail(password.error());
  }
  c.mysql.password = std::move(*password);
  auto key = LoadSecret("tencent_im.secret_key_file", c.tim_secret_key_file,
                        "ROOM_OUTBOX_TIM_SECRET_KEY", path);
  if (!key) {
    return Fail(key.error());
  }
  c.tencent_im.secret_key = std::move(*key);
  return c;
}

std::vector<std::string> ConfigKeys() {
  Config c;
  std::optional<Error> error;
  std::vector<std::string> names;
  ReadTables(nullptr, "", &error, c, &names);
  std::sort(names.begin(), names.end());
  return names;
}

Status CheckRunnable(const Config& config) {
  if (config.tencent_im.sdk_app_id == 0) {
    return Error{ErrorCode::kInvalidArgument,
                 config.path + ": tencent_im.sdk_app_id is not set (the IM application id)"};
  }
  if (config.tencent_im.secret_key.empty()) {
    return Error{ErrorCode::kInvalidArgument,
                 config.path +
                     ": no Tencent IM secret key: set tencent_im.secret_key_file or the "
                     "environment variable ROOM_OUTBOX_TIM_SECRET_KEY"};
  }
  return Status();
}

std::string RenderEffectiveConfig(const Config& c) {
  std::ostringstream o;
  const WorkerConfig& w = c.outbox_worker;
  const TencentImOptions& t = c.tencent_im;
  o << "# effective configuration of " << c.path << " (secrets redacted)\n";
  o << "node_id = " << Quote(c.node_id) << "\n\n";
  o << "[mysql]\n"
    << "host = " << Quote(c.mysql.host) << "\n"
    << "port = " << c.mysql.port << "\n"
    << "socket = " << Quote(c.mysql.socket) << "\n"
    << "user = " << Quote(c.mysql.user) << "\n"
    << "password_file = " << Quote(c.mysql_password_file) << "\n"
    << "# password = " << Quote(Secret(c.mysql.password)) << "\n"
    << "database = " << Quote(c.mysql.database) << "\n"
    << "connect_timeout = " << Quote(FormatDuration(c.mysql.connect_timeout)) << "\n\n";
  o << "[outbox_worker]\n"
    << "enabled = " << (w.enabled ? "true" : "false") << "\n"
    << "poll_interval = " << Quote(FormatDuration(w.poll_interval)) << "\n"
    << "batch_size = " << w.batch_size << "\n"
    << "publish_timeout = " << Quote(FormatDuration(w.publish_timeout)) << "\n"
    << "retry_strategy = " << Quote(w.retry_strategy) << "\n"
    << "max_in_flight = " << w.max_in_flight << "\n"
    << "ordering = " << Quote(w.ordering == Ordering::kPerRoom ? "per_room" : "none") << "\n"
    << "lease = " << Quote(FormatDuration(w.lease)) << "\n"
    << "room_min_interval = " << Quote(FormatDuration(w.room_min_interval)) << "\n"
    << "park_permanent_after = " << w.park_permanent_after << "\n\n";
  o << "[tencent_im]\n"
    << "endpoint = " << Quote(t.endpoint) << "\n"
    << "sdk_app_id = " << t.sdk_app_id << "\n"
    << "admin_identifier = " << Quote(t.admin_identifier) << "\n"
    << "secret_key_file = " << Quote(c.tim_secret_key_file) << "\n"
    << "# secret_key = " << Quote(Secret(t.secret_key)) << "\n"
    << "usersig_ttl = "
    << Quote(FormatDuration(std::chrono::duration_cast<std::chrono::milliseconds>(t.usersig_ttl)))
    << "\n"
    << "group_id_prefix = " << Quote(t.group_id_prefix) << "\n"
    << "skip_event_types = [";
  for (size_t i = 0; i < t.skip_event_types.size(); ++i) {
    o << (i == 0 ? "" : ", ") << Quote(t.skip_event_types[i]);
  }
  o << "]\n"
    << "requests_per_second = " << t.requests_per_second << "\n"
    << "ca_file = " << Quote(t.ca_file) << "\n"
    << "breaker_cooldown = " << Quote(FormatDuration(t.breaker_cooldown)) << "\n"
    << "max_body_bytes = " << t.max_body_bytes << "\n"
    << "msg_priority = " << Quote(MsgPriorityName(t.msg_priority)) << "\n\n";
  o << "[tencent_im.priority_by_type]\n";
  for (const auto& [type, priority] : t.priority_by_type) {
    o << Quote(type) << " = " << Quote(MsgPriorityName(priority)) << "\n";
  }
  o << "\n";
  o << "[hook]\n"
    << "sync_publish_timeout = " << Quote(FormatDuration(c.hook_sync_publish_timeout)) << "\n"
    << "sync_publish = " << Quote(SyncPublishModeName(c.hook_sync_publish)) << "\n\n";
  o << "[log]\n"
    << "level = " << Quote(c.log.level) << "\n"
    << "format = " << Quote(c.log.format == LogFormat::kJson ? "json" : "text") << "\n\n";
  o << "[metrics]\n"
    << "listen = " << Quote(c.metrics.listen) << "\n\n";
  o << "[wake]\n"
    << "socket = " << Quote(c.wake_socket) << "\n";
  return o.str();
}

}  // namespace room_outbox::relay
