// LoadHookOptions (room_outbox/hook.h): the hook's view of relay.toml.
#include <exception>
#include <optional>
#include <string>

#include "hook_config.h"
#include "room_outbox/hook.h"

namespace room_outbox {
namespace internal {

// The relay's sections, read by outbox-relay alone (its --check-config validates them).
constexpr const char* kRelayOnlySections[] = {"log", "metrics"};

void ReadHookSections(TableReader& top, SharedConfig& config, RelayKeys relay_keys) {
  ReadSharedSections(top, config);
  TableReader wake = top.Section("wake");
  ReadWakeSocket(wake, config);
  TableReader worker = top.Section("outbox_worker");
  ReadOrdering(worker, config);
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

Result<SharedConfig> LoadHookConfig(const std::string& path) {
  auto root = ParseConfigFile(path);
  if (!root) {
    return Fail(root.error());
  }
  SharedConfig config;
  config.path = path;
  std::optional<Error> error;
  TableReader top(&*root, "", path, &error);
  ReadHookSections(top, config, RelayKeys::kAccept);
  if (error) {
    return Fail(std::move(*error));
  }
  if (auto loaded = LoadSharedSecretsAndDefaults(config); !loaded) {
    return Fail(loaded.error());
  }
  return config;
}

}  // namespace internal

std::optional<HookOptions> LoadHookOptions(const std::string& path, Error* error) {
  Result<HookOptions> options;
  try {
    auto config = internal::LoadHookConfig(path);
    options = config ? Result<HookOptions>(ToHookOptions(*config)) : Fail(config.error());
  } catch (const std::exception& e) {  // std::bad_alloc: nothing throws across the API
    options = Fail(ErrorCode::kInternal, std::string("LoadHookOptions: ") + e.what());
  }
  if (!options) {
    if (error != nullptr) {
      *error = options.error();
    }
    return std::nullopt;
  }
  return std::move(*options);
}

}  // namespace room_outbox
