// FreedSecretWatch: finds secrets in heap memory that is freed without being wiped.
//
// freed_secret_watch.cc replaces the global operator new and operator delete (the forms every
// other form of libstdc++ forwards to) of the executable it is compiled into; it must be a source
// of that executable, never of a library, so that no other executable gets the replacement. Each
// block carries its size in a header of its own and starts zeroed (so it holds only what was
// written into it, never a stale copy from memory it reuses); while a watch is armed, operator
// delete searches every block it frees for the watch's markers before it frees it. A copy of a
// secret in a std::string's heap buffer, or a short one inside an object on the heap (a std::string
// keeps up to 15 bytes in itself), that is freed unwiped is a hit.
//
// Not seen: copies on the stack, memory freed with free() (the C libraries' own copies) and
// memory still allocated when the watch is disarmed. One watch at a time; arm it from one thread
// (other threads may allocate and free meanwhile).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace room_outbox::testing {

class FreedSecretWatch {
 public:
  // Arms the watch with up to kMaxMarkers markers of 4 to kMaxMarkerBytes bytes each.
  static constexpr size_t kMaxMarkers = 4;
  static constexpr size_t kMaxMarkerBytes = 128;
  explicit FreedSecretWatch(const std::vector<std::string_view>& markers);
  ~FreedSecretWatch();  // disarms
  FreedSecretWatch(const FreedSecretWatch&) = delete;
  FreedSecretWatch& operator=(const FreedSecretWatch&) = delete;

  // How many freed blocks held a marker since the watch was armed.
  int hits() const;
  // The sizes of the first hits (up to 16), for the failure message.
  std::string HitSizes() const;
};

}  // namespace room_outbox::testing
