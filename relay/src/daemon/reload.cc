#include "daemon/reload.h"

#include <utility>

namespace room_outbox::relay {

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
    logger_.Error(LogLine("configuration not reloaded: keeping the running configuration")
                      .Add("worker", "room_outbox")
                      .Add("node_id", running_.node_id)
                      .Add("config", running_.path)
                      .Add("error", loaded.error().message));
    return false;
  }
  Config next = std::move(*loaded);
  if (!cli_log_level_.empty()) {
    next.log.level = cli_log_level_;  // the command line still wins
  }
  const bool level_changed = next.log.level != running_.log.level;
  logger_.SetLevel(ParseLogLevel(next.log.level));

  const bool key_changed = next.tencent_im.secret_key != running_.tencent_im.secret_key;
  const bool password_changed = next.mysql.password != running_.mysql.password;
  std::string key_state = key_changed ? "changed" : "unchanged";
  if (key_changed) {
    if (hooks_.reload_secret_key) {
      hooks_.reload_secret_key(next.tencent_im.secret_key);
      key_state = "changed, applied";
    } else {
      key_state = "changed, applied at the next restart";
    }
  }
  // Everything else: compare the effective configs with the reloadable parts made equal.
  Config comparable = next;
  comparable.log.level = running_.log.level;
  comparable.tencent_im.secret_key = running_.tencent_im.secret_key;
  comparable.mysql.password = running_.mysql.password;
  const bool others_changed = RenderEffectiveConfig(comparable) != RenderEffectiveConfig(running_);

  LogLine line("configuration reloaded");
  line.Add("worker", "room_outbox")
      .Add("node_id", running_.node_id)
      .Add("config", running_.path)
      .Add("log_level", next.log.level)
      .Add("log_level_changed", level_changed)
      .Add("im_secret_key", key_state)
      .Add("mysql_password",
           password_changed ? "changed, applied at the next restart" : "unchanged");
  if (!cli_log_level_.empty()) {
    line.Add("log_level_pinned_by", "--log-level");
  }
  if (others_changed) {
    line.Add("other_changes", "applied at the next restart");
  }
  if (others_changed || password_changed || (key_changed && !hooks_.reload_secret_key)) {
    logger_.Warn(line);
  } else {
    logger_.Info(line);
  }
  // What the relay now runs with (secrets only as far as they were applied).
  running_.log.level = next.log.level;
  if (key_changed && hooks_.reload_secret_key) {
    running_.tencent_im.secret_key = next.tencent_im.secret_key;
  }
  return true;
}

}  // namespace room_outbox::relay
