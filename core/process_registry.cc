#include "core/process_registry.h"

#include <cstdio>

namespace room_outbox::core::registry_key {
namespace {

constexpr char kSeparator = '\x1f';

}  // namespace

void Append(std::string& key, std::string_view part) {
  key.append(part);
  key.push_back(kSeparator);
}

void Append(std::string& key, uint64_t part) { Append(key, std::to_string(part)); }

void Append(std::string& key, double part) {
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", part);
  Append(key, std::string_view(text));
}

}  // namespace room_outbox::core::registry_key
