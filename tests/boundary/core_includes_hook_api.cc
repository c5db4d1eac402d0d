// Must not compile: a core source that includes the hook's public API.
#include "room_outbox/hook.h"
