// Must compile: what a relay source may include (core, the public vocabulary headers, the relay's
// own headers). It keeps the failing probes honest: they fail for their one forbidden include.
#include "core/result.h"
#include "room_outbox/error.h"
#include "room_outbox/options.h"
#include "store/relay_store.h"

int RelayAllowedProbe() { return 0; }
