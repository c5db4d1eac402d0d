#pragma once

namespace room_outbox::relay {

// The project version, e.g. "0.1.0".
const char* Version();

// The source revision the build was configured from (git, short), "unknown" outside git.
const char* Revision();

}  // namespace room_outbox::relay
