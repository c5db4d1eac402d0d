#include "daemon/build_info.h"

namespace room_outbox::relay {

const char* Version() { return ROOM_OUTBOX_VERSION; }

}  // namespace room_outbox::relay
