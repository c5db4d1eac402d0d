#include "core/wake_path.h"

#include <sys/un.h>

namespace room_outbox::core {

std::string CheckWakeSocketPath(std::string_view path) {
  if (path.empty()) return "";
  if (path.find('\0') != std::string_view::npos) return "wake socket path holds a NUL byte";
  if (path.front() != '/')
    return "wake socket path must be absolute: \"" + std::string(path) + "\"";
  if (path.size() >= sizeof(sockaddr_un{}.sun_path)) {
    return "wake socket path is " + std::to_string(path.size()) +
           " bytes; a unix socket path holds at most " +
           std::to_string(sizeof(sockaddr_un{}.sun_path) - 1);
  }
  return "";
}

}  // namespace room_outbox::core
