// SIGHUP: re-read the config file and apply what can change in a running relay.
//
//   [log] level        applied at once (unless --log-level pinned it on the command line);
//   the secret files   re-read (mysql.password_file, tencent_im.secret_key_file, or their
//                      environment variables); a changed IM secret key goes to the publisher
//                      through `reload_secret_key` (which also drops the cached UserSig). Without
//                      that hook, and for the MySQL password, the change is logged as taking
//                      effect at the next restart;
//   anything else      compared with the running config and, when different, logged as taking
//                      effect at the next restart.
// Secret files that resolve into $CREDENTIALS_DIRECTORY (systemd LoadCredential=) are start-time
// copies: a reload re-reads the copy, and a warning says that a changed source file needs a
// restart. The config's warnings (a group/world-readable secret file, an unverified TCP link)
// are logged again. Replaced and unused secret strings are wiped (core/wipe.h).
// Then "configuration reloaded" (info) with what changed, or "configuration not reloaded"
// (error) with the reason when the file no longer loads; the relay keeps running either way.
//
// Thread-safety: Reload() runs on the signal watcher's thread; Reload and SetReloadSecretKey
// are serialised by a mutex.
#pragma once

#include <functional>
#include <mutex>
#include <string>

#include "config/config.h"
#include "telemetry/log_line.h"

namespace room_outbox::relay {

class ConfigReloader {
 public:
  struct Hooks {
    // Hands a new IM secret key to the publisher; empty: the publisher cannot take one.
    std::function<void(const std::string& secret_key)> reload_secret_key;
  };

  // `running` is the config the relay started with (after --log-level); `cli_log_level` is the
  // --log-level given on the command line, or empty.
  ConfigReloader(Config running, std::string cli_log_level, Logger& logger, Hooks hooks = {});

  // Returns true when the file loaded and was applied.
  bool Reload();

  // Sets (or replaces) Hooks::reload_secret_key, e.g. once the publisher exists. Safe against a
  // concurrent Reload().
  void SetReloadSecretKey(std::function<void(const std::string& secret_key)> hook);

  const Config& current() const { return running_; }

 private:
  Config running_;
  std::string cli_log_level_;
  Logger& logger_;
  std::mutex mu_;  // one reload at a time, and the hooks
  Hooks hooks_;
};

}  // namespace room_outbox::relay
