#include "daemon/build_info.h"

// The source revision (CMake sets it from git at configure time).
#ifndef ROOM_OUTBOX_REVISION
#define ROOM_OUTBOX_REVISION "unknown"
#endif

namespace room_outbox::relay {

const char* Version() { return ROOM_OUTBOX_VERSION; }

const char* Revision() { return ROOM_OUTBOX_REVISION; }

}  // namespace room_outbox::relay
