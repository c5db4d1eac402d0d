// Text bounded for a utf8mb4 column.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace room_outbox::core {

// room_outbox.last_error holds at most this many characters.
inline constexpr size_t kMaxLastErrorChars = 512;

// `text` cut to at most `max_chars` UTF-8 characters, never inside a character; bytes that are
// not valid UTF-8 become '?' (the column is utf8mb4 and the server would refuse them).
[[nodiscard]] std::string TruncateUtf8(std::string_view text, size_t max_chars);

}  // namespace room_outbox::core
