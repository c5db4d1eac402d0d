#include "support/freed_secret_watch.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>

namespace {

// The header in front of every block: its size, padded to the strictest fundamental alignment so
// the block stays aligned for any object operator new may hold.
constexpr size_t kHeader = alignof(std::max_align_t);
static_assert(kHeader >= sizeof(size_t));

struct Marker {
  char bytes[room_outbox::testing::FreedSecretWatch::kMaxMarkerBytes];
  size_t size;
};

// Written by the arming thread before `armed` is set (release), read after it is seen (acquire).
Marker markers[room_outbox::testing::FreedSecretWatch::kMaxMarkers];
size_t marker_count = 0;
std::atomic<bool> armed{false};
std::atomic<int> hit_count{0};
constexpr int kMaxSizes = 16;
std::atomic<size_t> hit_sizes[kMaxSizes];

void* Allocate(size_t size) {
  for (;;) {
    // Zeroed: a block holds only what was written into it since, never the bytes of an earlier
    // block that reused its memory (which a hit would blame on the block's last owner).
    if (void* base = std::calloc(1, size + kHeader)) {
      std::memcpy(base, &size, sizeof(size));
      return static_cast<char*>(base) + kHeader;
    }
    std::new_handler handler = std::get_new_handler();
    if (handler == nullptr) {
      throw std::bad_alloc();
    }
    handler();
  }
}

void Check(const char* block, size_t size) {
  for (size_t i = 0; i < marker_count; ++i) {
    if (size >= markers[i].size &&
        ::memmem(block, size, markers[i].bytes, markers[i].size) != nullptr) {
      const int n = hit_count.fetch_add(1);
      if (n < kMaxSizes) {
        hit_sizes[n].store(size);
      }
      return;
    }
  }
}

void Free(void* p) noexcept {
  if (p == nullptr) {
    return;
  }
  char* base = static_cast<char*>(p) - kHeader;
  if (armed.load(std::memory_order_acquire)) {
    size_t size = 0;
    std::memcpy(&size, base, sizeof(size));
    Check(static_cast<const char*>(p), size);
  }
  std::free(base);
}

}  // namespace

void* operator new(size_t size) { return Allocate(size); }
void* operator new[](size_t size) { return Allocate(size); }
void* operator new(size_t size, const std::nothrow_t&) noexcept {
  try {
    return Allocate(size);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](size_t size, const std::nothrow_t&) noexcept {
  try {
    return Allocate(size);
  } catch (...) {
    return nullptr;
  }
}
void operator delete(void* p) noexcept { Free(p); }
void operator delete[](void* p) noexcept { Free(p); }
void operator delete(void* p, size_t) noexcept { Free(p); }
void operator delete[](void* p, size_t) noexcept { Free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { Free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { Free(p); }

namespace room_outbox::testing {

FreedSecretWatch::FreedSecretWatch(const std::vector<std::string_view>& list) {
  marker_count = 0;
  for (std::string_view m : list) {
    if (marker_count == kMaxMarkers || m.size() < 4 || m.size() > kMaxMarkerBytes) {
      std::abort();  // a test's mistake
    }
    std::memcpy(markers[marker_count].bytes, m.data(), m.size());
    markers[marker_count].size = m.size();
    ++marker_count;
  }
  hit_count.store(0);
  armed.store(true, std::memory_order_release);
}

FreedSecretWatch::~FreedSecretWatch() { armed.store(false, std::memory_order_release); }

int FreedSecretWatch::hits() const { return hit_count.load(); }

std::string FreedSecretWatch::HitSizes() const {
  std::string sizes;
  const int n = hit_count.load();
  for (int i = 0; i < n && i < kMaxSizes; ++i) {
    sizes += (sizes.empty() ? "" : ", ") + std::to_string(hit_sizes[i].load()) + " bytes";
  }
  return sizes;
}

}  // namespace room_outbox::testing
