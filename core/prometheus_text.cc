#include "core/prometheus_text.h"

#include <cmath>
#include <cstdio>

namespace room_outbox::core::prom {

std::string LabelValue(std::string_view v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

std::string Num(double v) {
  if (std::isnan(v)) return "NaN";
  if (v == std::floor(v) && std::fabs(v) < 9e15) {
    return std::to_string(static_cast<int64_t>(v));
  }
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.3f", v);
  return buf;
}

std::string Decimal(int64_t value, int64_t divisor) {
  if (divisor <= 1) return std::to_string(value);
  std::string out = value < 0 ? "-" : "";
  const uint64_t magnitude = value < 0 ? 0 - static_cast<uint64_t>(value) : value;
  const uint64_t d = static_cast<uint64_t>(divisor);
  out += std::to_string(magnitude / d);
  std::string fraction = std::to_string(magnitude % d + d).substr(1);  // zero-padded digits
  while (!fraction.empty() && fraction.back() == '0') fraction.pop_back();
  if (!fraction.empty()) out += "." + fraction;
  return out;
}

}  // namespace room_outbox::core::prom
