// Binding id and room lists into IN (...) placeholder lists of a few fixed sizes.
//
// A list is cut into chunks of these sizes and a short chunk is padded by repeating its last
// value (harmless inside IN), so each statement has at most kListSizes.size() prepared shapes
// per connection.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <string>

#include "core/result.h"

namespace room_outbox::core {

inline constexpr std::array<size_t, 5> kListSizes = {1, 8, 32, 128, 512};

// The smallest list size that holds `remaining` items, or the largest size.
size_t ListSizeFor(size_t remaining);

// "(?, ?, ..., ?)" with n placeholders.
std::string Placeholders(size_t n);

// Calls chunk(size, offset, count) for consecutive slices of n items, each bound through a
// placeholder list of `size` >= count entries. Stops at the first failure.
template <class Chunk>
Result<void> ForEachChunk(size_t n, Chunk&& chunk) {
  for (size_t at = 0; at < n;) {
    const size_t size = ListSizeFor(n - at);
    const size_t count = std::min(size, n - at);
    if (auto done = chunk(size, at, count); !done) {
      return done;
    }
    at += count;
  }
  return {};
}

}  // namespace room_outbox::core
