// Must not compile: a relay source that includes a header of the hook's own sources.
#include "hook_impl.h"
