#include "core/mysql/id_lists.h"

namespace room_outbox::core {

size_t ListSizeFor(size_t remaining) {
  for (size_t size : kListSizes) {
    if (size >= remaining) {
      return size;
    }
  }
  return kListSizes.back();
}

std::string Placeholders(size_t n) {
  std::string out = "(";
  for (size_t i = 0; i < n; ++i) {
    out += i == 0 ? "?" : ", ?";
  }
  return out + ")";
}

}  // namespace room_outbox::core
