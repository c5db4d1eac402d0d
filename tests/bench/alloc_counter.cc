// Counting replacements of the global operator new and of glibc's malloc family; see
// alloc_counter.h for what is counted.
#include "bench/alloc_counter.h"

#include <cstddef>
#include <cstdlib>
#include <new>

namespace {

// Plain thread-locals of trivial types in the executable: static TLS, no allocation to reach.
thread_local bool t_counting = false;
thread_local uint64_t t_operator_new = 0;
thread_local uint64_t t_malloc = 0;

void* CountedNew(std::size_t size) {
  if (t_counting) {
    ++t_operator_new;
  }
  if (void* p = std::malloc(size == 0 ? 1 : size)) {
    return p;
  }
  throw std::bad_alloc();
}

void* CountedAlignedNew(std::size_t size, std::align_val_t align) {
  if (t_counting) {
    ++t_operator_new;
  }
  const auto alignment = static_cast<std::size_t>(align);
  // aligned_alloc wants a size that is a multiple of the alignment.
  const std::size_t rounded = (size + alignment - 1) / alignment * alignment;
  if (void* p = std::aligned_alloc(alignment, rounded == 0 ? alignment : rounded)) {
    return p;
  }
  throw std::bad_alloc();
}

}  // namespace

#if !defined(ROOM_OUTBOX_SANITIZED)
// glibc's own allocator under its internal names (glibc manual, "Replacing malloc").
extern "C" {
void* __libc_malloc(std::size_t size);
void* __libc_calloc(std::size_t count, std::size_t size);
void* __libc_realloc(void* p, std::size_t size);
void __libc_free(void* p);

void* malloc(std::size_t size) {
  if (t_counting) {
    ++t_malloc;
  }
  return __libc_malloc(size);
}

void* calloc(std::size_t count, std::size_t size) {
  if (t_counting) {
    ++t_malloc;
  }
  return __libc_calloc(count, size);
}

void* realloc(void* p, std::size_t size) {
  if (t_counting) {
    ++t_malloc;
  }
  return __libc_realloc(p, size);
}

void free(void* p) { __libc_free(p); }
}
#endif

void* operator new(std::size_t size) { return CountedNew(size); }
void* operator new[](std::size_t size) { return CountedNew(size); }
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  try {
    return CountedNew(size);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
  try {
    return CountedNew(size);
  } catch (...) {
    return nullptr;
  }
}
void* operator new(std::size_t size, std::align_val_t align) {
  return CountedAlignedNew(size, align);
}
void* operator new[](std::size_t size, std::align_val_t align) {
  return CountedAlignedNew(size, align);
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }

namespace room_outbox::bench {

AllocWindow::AllocWindow() {
  t_operator_new = 0;
  t_malloc = 0;
  t_counting = true;
}

AllocWindow::~AllocWindow() { t_counting = false; }

AllocCounts AllocWindow::counts() const {
  AllocCounts out;
  out.operator_new = t_operator_new;
  out.malloc = t_malloc;
#if defined(ROOM_OUTBOX_SANITIZED)
  out.malloc_counted = false;
#endif
  return out;
}

}  // namespace room_outbox::bench
