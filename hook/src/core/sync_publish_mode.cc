// The config spelling of HookOptions::sync_publish.
#include <optional>
#include <string_view>

#include "room_outbox/hook.h"

namespace room_outbox {

const char* SyncPublishModeName(SyncPublishMode mode) {
  switch (mode) {
    case SyncPublishMode::kInline:
      return "inline";
    case SyncPublishMode::kBackground:
      return "background";
    case SyncPublishMode::kOff:
      return "off";
  }
  return "inline";
}

std::optional<SyncPublishMode> ParseSyncPublishMode(std::string_view name) {
  for (SyncPublishMode mode :
       {SyncPublishMode::kInline, SyncPublishMode::kBackground, SyncPublishMode::kOff}) {
    if (name == SyncPublishModeName(mode)) {
      return mode;
    }
  }
  return std::nullopt;
}

}  // namespace room_outbox
