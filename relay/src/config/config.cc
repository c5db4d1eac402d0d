#include "config/config.h"

#include <algorithm>
#include <optional>
#include <string_view>

#include "core/config/duration.h"
#include "core/config/duration_limits.h"
#include "core/config/toml_reader.h"
#include "core/mysql/connect_options.h"

namespace room_outbox::relay {
namespace {

core::Result<void> CheckListen(const std::string& listen) {
  const size_t colon = listen.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == listen.size()) {
    return core::Fail(ErrorCode::kInvalidArgument,
                      "\"" + listen + "\" is not host:port (e.g. \"127.0.0.1:9464\")");
  }
  const std::string port = listen.substr(colon + 1);
  if (port.find_first_not_of("0123456789") != std::string::npos || port.size() > 5 ||
      std::stoi(port) < 1 || std::stoi(port) > 65535) {
    return core::Fail(ErrorCode::kInvalidArgument, "port in \"" + listen + "\" is not 1..65535");
  }
  return {};
}

void ReadWorker(core::TableReader& r, Config& c) {
  WorkerConfig& w = c.outbox_worker;
  if (auto v = r.Bool("enabled")) w.enabled = *v;
  r.PositiveDuration("poll_interval", &w.poll_interval, core::kMaxPollInterval.max);
  if (auto v = r.Integer("batch_size"); v && *v > 0) {
    w.batch_size = static_cast<size_t>(*v);
  }
  r.PositiveDuration("publish_timeout", &w.publish_timeout, core::kMaxPublishTimeout.max);
  if (auto v = r.String("retry_strategy")) {
    if (v->empty() || *v == "fixed_interval") {
      w.retry_strategy = "fixed_interval";
    } else {
      r.SetError(r.NodeOf("retry_strategy"), "retry_strategy",
                 "unknown value \"" + *v + "\" (accepted: \"fixed_interval\" or empty)");
    }
  }
  if (auto v = r.Integer("max_in_flight"); v && *v > 0) {
    w.max_in_flight = static_cast<size_t>(*v);
  }
  core::ReadOrdering(r, c);
  w.ordering = c.per_room_order ? Ordering::kPerRoom : Ordering::kNone;
  r.PositiveDuration("lease", &w.lease, core::kMaxLease.max);
  if (auto v = r.Duration("room_min_interval")) {
    // 0 is meaningful here (no pacing); only a negative value falls back to the default.
    if (v->count() >= 0) {
      w.room_min_interval = *v;
    }
  }
  if (auto v = r.Integer("park_permanent_after")) w.park_permanent_after = *v;
  if (auto broken = CheckWorkerConfig(w); broken && !r.failed()) {
    r.SetError(r.NodeOrFallback(broken->key, broken->fallback_key), broken->key, broken->what);
  }
  r.CheckUnknown();
}

void ReadLog(core::TableReader& r, Config& c) {
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

void ReadMetrics(core::TableReader& r, Config& c) {
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

// "0660", "660": octal permission bits, at most 0777.
std::optional<mode_t> ParseSocketMode(const std::string& text) {
  if (text.empty() || text.size() > 4 || text.find_first_not_of("01234567") != std::string::npos) {
    return std::nullopt;
  }
  const unsigned long mode = std::stoul(text, nullptr, 8);
  if (mode > 0777) {
    return std::nullopt;
  }
  return static_cast<mode_t>(mode);
}

// [wake]: the socket (shared with the hook's reader), then the relay's own keys. After
// [outbox_worker]: min_interval is checked against poll_interval.
void ReadWake(core::TableReader& r, Config& c) {
  core::ReadWakeSocket(r, c);
  r.PositiveDuration("min_interval", &c.wake.min_interval, core::kMaxPollInterval.max);
  if (c.wake.min_interval > c.outbox_worker.poll_interval && !r.failed()) {
    r.SetError(r.NodeOf("min_interval"), "min_interval",
               core::FormatDuration(c.wake.min_interval) + " must not exceed [outbox_worker] " +
                   "poll_interval (" + core::FormatDuration(c.outbox_worker.poll_interval) +
                   "): a wake-up only shortens the wait for the next poll");
  }
  if (auto v = r.String("socket_mode")) {
    if (auto mode = ParseSocketMode(*v)) {
      c.wake.socket_mode = *mode;
    } else {
      r.SetError(r.NodeOf("socket_mode"), "socket_mode",
                 "\"" + *v + "\" is not an octal file mode of at most 0777 (e.g. \"0660\")");
    }
  }
  r.CheckUnknown();
}

// Reads the top-level keys and every section of `root` (null: an empty file) into `c`; when
// `names` is set, appends the dotted name of every key and table the readers ask for.
void ReadTables(const toml::table* root, const std::string& path, std::optional<Error>* error,
                Config& c, std::vector<std::string>* names) {
  core::TableReader top(root, "", path, error, names);
  core::ReadSharedSections(top, c);
  struct Section {
    const char* name;
    void (*read)(core::TableReader&, Config&);
  };
  for (const Section& s : {Section{"outbox_worker", ReadWorker}, Section{"log", ReadLog},
                           Section{"metrics", ReadMetrics}, Section{"wake", ReadWake}}) {
    core::TableReader r = top.Section(s.name);
    s.read(r, c);
  }
  top.CheckUnknown();
}

}  // namespace

std::vector<std::string> ConfigKeys() {
  Config c;
  std::optional<Error> error;
  std::vector<std::string> names;
  ReadTables(nullptr, "", &error, c, &names);
  std::sort(names.begin(), names.end());
  return names;
}

bool IsValidLogLevel(const std::string& level) {
  return level == "trace" || level == "debug" || level == "info" || level == "warn" ||
         level == "error";
}

core::Result<Config> LoadConfig(const std::string& path, core::SecretUse secrets) {
  auto root = core::ParseConfigFile(path);
  if (!root) {
    return core::Fail(root.error());
  }
  Config c;
  c.path = path;
  std::optional<Error> error;
  ReadTables(&*root, path, &error, c, nullptr);
  if (error) {
    return core::Fail(std::move(*error));
  }
  if (auto loaded = core::LoadSharedSecretsAndDefaults(c, secrets); !loaded) {
    return core::Fail(loaded.error());
  }
  if (std::string tls = core::TlsExposureWarning(c.mysql); !tls.empty()) {
    c.warnings.push_back(std::move(tls));
  }
  return c;
}

Status CheckRunnable(const Config& config) {
  if (config.tencent_im.sdk_app_id == 0) {
    return Error{ErrorCode::kInvalidArgument,
                 config.path + ": tencent_im.sdk_app_id is not set (the IM application id)"};
  }
  if (config.tencent_im.sdk_app_id == kPlaceholderSdkAppId) {
    return Error{ErrorCode::kInvalidArgument,
                 config.path + ": tencent_im.sdk_app_id = " + std::to_string(kPlaceholderSdkAppId) +
                     " is the shipped template's placeholder: set the SDKAppID of your IM "
                     "application (Tencent Cloud IM console)"};
  }
  if (config.tencent_im.secret_key.empty()) {
    return Error{ErrorCode::kInvalidArgument,
                 config.path +
                     ": no Tencent IM secret key: set tencent_im.secret_key_file or the "
                     "environment variable ROOM_OUTBOX_TIM_SECRET_KEY"};
  }
  return Status();
}

}  // namespace room_outbox::relay
