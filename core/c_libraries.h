// The C libraries' process-wide set-up: mysql_library_init and curl_global_init, the one place
// that calls them and their cleanups. A process calls InitCLibraries once before any thread
// starts (the relay's CLibraries, the hook's public LibraryInit) and CleanupCLibraries once after
// the last connection and transfer are gone.
#pragma once

#include "room_outbox/error.h"

namespace room_outbox::core {

// OK, or what failed. `curl_ready` is set when curl_global_init succeeded, so the cleanup
// releases exactly what the init took.
Status InitCLibraries(bool& curl_ready);
// mysql_library_end always (safe after a failed init), curl_global_cleanup when `curl_ready`.
void CleanupCLibraries(bool curl_ready);

// RAII over the two for a program that is not a hook host (the relay).
class CLibraries {
 public:
  CLibraries() : status_(InitCLibraries(curl_ready_)) {}
  ~CLibraries() { CleanupCLibraries(curl_ready_); }
  CLibraries(const CLibraries&) = delete;
  CLibraries& operator=(const CLibraries&) = delete;
  const Status& status() const { return status_; }

 private:
  bool curl_ready_ = false;
  Status status_;
};

}  // namespace room_outbox::core
