// LoadHookOptions (room_outbox/hook.h): the hook's view of relay.toml.
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "core/wipe.h"
#include "hook_config.h"
#include "room_outbox/hook.h"

namespace room_outbox {
namespace internal {

// The relay's sections, read by outbox-relay alone (its --check-config validates them).
constexpr const char* kRelayOnlySections[] = {"log", "metrics"};

void ToHookOptions(const core::SharedConfig& c, HookOptions& options) {
  options.mysql = c.mysql;
  options.tencent_im = c.tencent_im;
  options.sync_publish_timeout = c.hook.sync_publish_timeout;
  options.sync_publish = c.hook.sync_publish;
  options.wake_socket = c.wake_socket;
  options.node_id = c.node_id;
  options.per_room_order = c.per_room_order;
}

WipedOnExit::~WipedOnExit() {
  core::WipeSecrets(options_.mysql);
  core::WipeSecrets(options_.tencent_im);
}

void ReadHookSections(core::TableReader& top, core::SharedConfig& config, RelayKeys relay_keys) {
  core::ReadSharedSections(top, config);
  core::TableReader wake = top.Section("wake");
  core::ReadWakeSocket(wake, config);
  core::TableReader worker = top.Section("outbox_worker");
  core::ReadOrdering(worker, config);
  if (relay_keys == RelayKeys::kAccept) {
    for (const char* section : kRelayOnlySections) {
      top.Accept(section);
    }
  } else {
    wake.CheckUnknown();
    worker.CheckUnknown();
  }
  top.CheckUnknown();
}

core::Result<core::SharedConfig> LoadHookConfig(const std::string& path) {
  auto root = core::ParseConfigFile(path);
  if (!root) {
    return core::Fail(root.error());
  }
  core::SharedConfig config;
  config.path = path;
  std::optional<Error> error;
  core::TableReader top(&*root, "", path, &error);
  ReadHookSections(top, config, RelayKeys::kAccept);
  if (error) {
    return core::Fail(std::move(*error));
  }
  if (auto loaded = core::LoadSharedSecretsAndDefaults(config); !loaded) {
    return core::Fail(loaded.error());
  }
  return config;
}

}  // namespace internal

std::optional<HookOptions> LoadHookOptions(const std::string& path, Error* error) {
  return LoadHookOptions(path, error, nullptr);
}

std::optional<HookOptions> LoadHookOptions(const std::string& path, Error* error,
                                           std::vector<std::string>* warnings) {
  // Filled in place and returned as it is: no moved-from copy of the secrets is left behind.
  std::optional<HookOptions> options;
  Error failure;
  try {
    auto config = internal::LoadHookConfig(path);
    if (config) {
      internal::ToHookOptions(*config, options.emplace());
      if (warnings != nullptr) {
        warnings->insert(warnings->end(), config->warnings.begin(), config->warnings.end());
      }
    } else {
      failure = config.error();
    }
  } catch (const std::exception& e) {  // std::bad_alloc: nothing throws across the API
    if (options) {
      internal::WipedOnExit wiped(*options);
    }
    options.reset();
    failure = Error{ErrorCode::kInternal, std::string("LoadHookOptions: ") + e.what()};
  }
  if (!options && error != nullptr) {
    *error = std::move(failure);
  }
  return options;
}

}  // namespace room_outbox
