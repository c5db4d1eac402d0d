#pragma once

namespace room_outbox::relay {

// The project version, e.g. "0.1.0".
const char* Version();

}  // namespace room_outbox::relay
