// Must compile: what a core source may include (core and the public vocabulary headers).
#include "core/result.h"
#include "room_outbox/envelope.h"
#include "room_outbox/error.h"
#include "room_outbox/options.h"

int CoreAllowedProbe() { return 0; }
