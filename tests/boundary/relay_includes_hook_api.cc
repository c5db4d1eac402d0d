// Must not compile: a relay source that includes the hook's public API.
#include "room_outbox/hook.h"
