// The `[wake] socket` path rule, shared by the hook (which sends to it) and the relay (which
// binds it).
#pragma once

#include <string>
#include <string_view>

namespace room_outbox::core {

// "" when `path` can name a unix datagram socket (empty: none), else why not: relative, holding
// a NUL byte, or too long for sun_path.
std::string CheckWakeSocketPath(std::string_view path);

}  // namespace room_outbox::core
