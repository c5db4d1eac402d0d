#include "core/utf8.h"

#include <algorithm>

namespace room_outbox::core {

std::string TruncateUtf8(std::string_view text, size_t max_chars) {
  std::string out;
  out.reserve(std::min(text.size(), max_chars * 4));
  size_t chars = 0;
  size_t i = 0;
  while (i < text.size() && chars < max_chars) {
    const auto lead = static_cast<unsigned char>(text[i]);
    size_t len = 0;
    unsigned char min_second = 0x80;
    unsigned char max_second = 0xBF;
    if (lead < 0x80) {
      len = 1;
    } else if (lead >= 0xC2 && lead <= 0xDF) {
      len = 2;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
      len = 3;
      if (lead == 0xE0) min_second = 0xA0;  // no overlong forms
      if (lead == 0xED) max_second = 0x9F;  // no UTF-16 surrogates
    } else if (lead >= 0xF0 && lead <= 0xF4) {
      len = 4;
      if (lead == 0xF0) min_second = 0x90;
      if (lead == 0xF4) max_second = 0x8F;  // nothing above U+10FFFF
    }
    bool valid = len > 0 && i + len <= text.size();
    for (size_t k = 1; valid && k < len; ++k) {
      const auto c = static_cast<unsigned char>(text[i + k]);
      const unsigned char lo = k == 1 ? min_second : 0x80;
      const unsigned char hi = k == 1 ? max_second : 0xBF;
      valid = c >= lo && c <= hi;
    }
    if (valid) {
      out.append(text.substr(i, len));
      i += len;
    } else {
      out += '?';
      i += 1;
    }
    ++chars;
  }
  return out;
}

}  // namespace room_outbox::core
