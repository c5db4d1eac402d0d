// LibraryInit (room_outbox/hook.h): the C libraries' set-up of core, for a hook host.
#include "core/c_libraries.h"
#include "room_outbox/hook.h"

namespace room_outbox {

// curl_ is declared after status_, so it is set in the body, after its own initialiser.
LibraryInit::LibraryInit() { status_ = core::InitCLibraries(curl_); }

LibraryInit::~LibraryInit() { core::CleanupCLibraries(curl_); }

}  // namespace room_outbox
