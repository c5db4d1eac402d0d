// The default node_id of the hook and the relay.
#pragma once

#include <string>

namespace room_outbox::core {

// gethostname(), or "unknown-host" when it fails or is empty.
std::string HostName();

}  // namespace room_outbox::core
