// Heap allocations made by one thread inside a window  (allocations per
// Commit).
//
// alloc_counter.cc replaces the global operator new (every form) and, outside sanitizer builds,
// glibc's malloc, calloc and realloc with versions that count a call when the calling thread
// has an AllocWindow open and then forward to glibc's allocator (__libc_malloc & co.). So:
//   operator_new: calls of any operator new (C++ containers, strings, std::function, ...);
//   malloc: calls of malloc, calloc and realloc from any code of the thread, the MariaDB
//           client library's own included, and operator new's calls of malloc.
// Frees are not counted. Other threads (the IM stub's, the server) are never counted.
//
// Not reentrant: one window per thread at a time.
#pragma once

#include <cstdint>

namespace room_outbox::bench {

struct AllocCounts {
  uint64_t operator_new = 0;
  uint64_t malloc = 0;
  // False when malloc is not interposed (sanitizer builds bring their own allocator).
  bool malloc_counted = true;
};

class AllocWindow {
 public:
  AllocWindow();   // starts counting on this thread
  ~AllocWindow();  // stops
  AllocWindow(const AllocWindow&) = delete;
  AllocWindow& operator=(const AllocWindow&) = delete;

  // What this thread allocated since the window opened.
  AllocCounts counts() const;
};

}  // namespace room_outbox::bench
