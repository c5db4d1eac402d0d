#include "daemon/reload.h"

#include <utility>

#include "core/config/secrets.h"
#include "core/wipe.h"
#include "daemon/lifecycle_log.h"

namespace room_outbox::relay {
namespace {

constexpr char kAtRestart[] = "changed, applied at the next restart";

// What a reload changes, `running` against `next` (after --log-level).
struct ReloadChanges {
  bool level = false;
  bool secret_key = false;
  bool secret_key_applied = false;  // a changed key went to the publisher
  bool password = false;
  bool others = false;  // anything that only a restart applies
};

ReloadChanges Compare(const Config& running, const Config& next, bool can_apply_key) {
  ReloadChanges c;
  c.level = next.log.level != running.log.level;
  c.secret_key = next.tencent_im.secret_key != running.tencent_im.secret_key;
  c.secret_key_applied = c.secret_key && can_apply_key;
  c.password = next.mysql.password != running.mysql.password;
  // Everything else: compare the effective configs with the reloadable parts made equal.
  Config comparable = next;
  comparable.log.level = running.log.level;
  core::ReplaceSecret(comparable.tencent_im.secret_key, running.tencent_im.secret_key);
  core::ReplaceSecret(comparable.mysql.password, running.mysql.password);
  c.others = RenderEffectiveConfig(comparable) != RenderEffectiveConfig(running);
  return c;
}

// "configuration reloaded" with what changed and when it applies.
LogLine ReloadedLine(const Config& running, const Config& next, const ReloadChanges& c,
                     bool pinned_by_cli) {
  std::string key_state = "unchanged";
  if (c.secret_key) {
    key_state = c.secret_key_applied ? "changed, applied" : kAtRestart;
  }
  LogLine line = Lifecycle("configuration reloaded", running);
  line.Add("config", running.path)
      .Add("log_level", next.log.level)
      .Add("log_level_changed", c.level)
      .Add("im_secret_key", key_state)
      .Add("mysql_password", c.password ? kAtRestart : "unchanged");
  if (pinned_by_cli) {
    line.Add("log_level_pinned_by", "--log-level");
  }
  if (c.others) {
    line.Add("other_changes", "applied at the next restart");
  }
  return line;
}

// The secret files that systemd copied into $CREDENTIALS_DIRECTORY at start: a reload re-reads
// the copy, never the changed source file.
std::vector<std::string> CredentialCopies(const Config& c) {
  std::vector<std::string> keys;
  if (core::IsCredentialCopy(c.mysql_password_file, c.path)) {
    keys.push_back("mysql.password_file");
  }
  if (core::IsCredentialCopy(c.tim_secret_key_file, c.path)) {
    keys.push_back("tencent_im.secret_key_file");
  }
  return keys;
}

void WarnAboutCredentials(const Config& next, Logger& logger) {
  const std::vector<std::string> keys = CredentialCopies(next);
  if (keys.empty()) {
    return;
  }
  std::string names;
  for (const std::string& key : keys) {
    names += (names.empty() ? "" : ",") + key;
  }
  logger.Warn(Lifecycle("secret files are systemd credentials (LoadCredential=), copied when the "
                        "service started: a reload re-reads that copy, so a changed source file "
                        "takes effect only after a restart (systemctl restart)",
                        next)
                  .Add("config", next.path)
                  .Add("credential_keys", names));
}

}  // namespace

ConfigReloader::ConfigReloader(Config running, std::string cli_log_level, Logger& logger,
                               Hooks hooks)
    : running_(std::move(running)),
      cli_log_level_(std::move(cli_log_level)),
      logger_(logger),
      hooks_(std::move(hooks)) {}

void ConfigReloader::SetReloadSecretKey(std::function<void(const std::string&)> hook) {
  std::lock_guard<std::mutex> lock(mu_);
  hooks_.reload_secret_key = std::move(hook);
}

bool ConfigReloader::Reload() {
  std::lock_guard<std::mutex> lock(mu_);
  auto loaded = LoadConfig(running_.path);
  if (!loaded) {
    logger_.Error(Lifecycle("configuration not reloaded: keeping the running configuration",
                            running_)
                      .Add("config", running_.path)
                      .Add("error", loaded.error().message));
    return false;
  }
  Config next = std::move(*loaded);
  if (!cli_log_level_.empty()) {
    next.log.level = cli_log_level_;  // the command line still wins
  }
  logger_.SetLevel(ParseLogLevel(next.log.level));
  for (const std::string& warning : next.warnings) {
    logger_.Warn(Lifecycle("configuration warning", next).Add("warning", warning));
  }
  WarnAboutCredentials(next, logger_);
  const ReloadChanges changes =
      Compare(running_, next, static_cast<bool>(hooks_.reload_secret_key));
  if (changes.secret_key_applied) {
    hooks_.reload_secret_key(next.tencent_im.secret_key);
  }
  const LogLine line = ReloadedLine(running_, next, changes, !cli_log_level_.empty());
  if (changes.others || changes.password || (changes.secret_key && !changes.secret_key_applied)) {
    logger_.Warn(line);
  } else {
    logger_.Info(line);
  }
  // What the relay now runs with (secrets only as far as they were applied).
  running_.log.level = next.log.level;
  if (changes.secret_key_applied) {
    core::ReplaceSecret(running_.tencent_im.secret_key, std::move(next.tencent_im.secret_key));
  }
  // The copies this reload read and did not keep.
  core::WipeString(next.tencent_im.secret_key);
  core::WipeString(next.mysql.password);
  return true;
}

}  // namespace room_outbox::relay
