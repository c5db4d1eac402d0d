#include "core/host_name.h"

#include <unistd.h>

#include <array>

namespace room_outbox::core {

std::string HostName() {
  std::array<char, 256> name{};
  if (gethostname(name.data(), name.size() - 1) != 0 || name[0] == '\0') {
    return "unknown-host";
  }
  return name.data();
}

}  // namespace room_outbox::core
