// LoadHookOptions (room_outbox/hook.h): the hook's view of relay.toml.
#include <exception>
#include <optional>
#include <string>

#include "core/config/shared_config.h"
#include "room_outbox/hook.h"

namespace room_outbox {
namespace {

// The relay's sections, read by outbox-relay alone (its --check-config validates them).
constexpr const char* kRelayOnlySections[] = {"log", "metrics"};

Result<HookOptions> Load(const std::string& path) {
  auto root = ParseConfigFile(path);
  if (!root) {
    return Fail(root.error());
  }
  SharedConfig config;
  config.path = path;
  std::optional<Error> error;
  TableReader top(&*root, "", path, &error);
  ReadSharedSections(top, config);
  TableReader wake = top.Section("wake");
  ReadWakeSocket(wake, config);
  TableReader worker = top.Section("outbox_worker");
  ReadOrdering(worker, config);
  for (const char* section : kRelayOnlySections) {
    top.Accept(section);
  }
  top.CheckUnknown();
  if (error) {
    return Fail(std::move(*error));
  }
  if (auto loaded = LoadSharedSecretsAndDefaults(config); !loaded) {
    return Fail(loaded.error());
  }
  return ToHookOptions(config);
}

}  // namespace

std::optional<HookOptions> LoadHookOptions(const std::string& path, Error* error) {
  Result<HookOptions> options;
  try {
    options = Load(path);
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
