#include "core/config/duration.h"

#include <charconv>
#include <cstdint>
#include <limits>

namespace room_outbox::core {
namespace {

constexpr int64_t kMaxDurationMs = kMaxDuration.count();

struct Unit {
  std::string_view suffix;
  int64_t ms;
};
// "ms" before "m" and "s" so the longest suffix wins.
constexpr Unit kUnits[] = {{"ms", 1}, {"s", 1000}, {"m", 60'000}, {"h", 3'600'000}};

tl::unexpected<Error> Malformed(std::string_view text) {
  return Fail(ErrorCode::kInvalidArgument,
              "invalid duration \"" + std::string(text) +
                  "\": expected an integer and a unit ms, s, m or h, e.g. \"500ms\", \"3s\"");
}

}  // namespace

Result<std::chrono::milliseconds> ParseDuration(std::string_view text) {
  if (text == "0" || text == "-0") {
    return std::chrono::milliseconds{0};
  }
  bool negative = false;
  std::string_view digits = text;
  if (!digits.empty() && digits.front() == '-') {
    negative = true;
    digits.remove_prefix(1);
  }
  size_t n = 0;
  while (n < digits.size() && digits[n] >= '0' && digits[n] <= '9') {
    ++n;
  }
  if (n == 0) {
    return Malformed(text);
  }
  const std::string_view suffix = digits.substr(n);
  for (const Unit& unit : kUnits) {
    if (suffix != unit.suffix) {
      continue;
    }
    int64_t value = 0;
    auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + n, value);
    if (ec != std::errc() || ptr != digits.data() + n || value > kMaxDurationMs / unit.ms) {
      return Fail(ErrorCode::kInvalidArgument, "invalid duration \"" + std::string(text) +
                                                   "\": out of range (at most " +
                                                   FormatDuration(kMaxDuration) + ")");
    }
    const int64_t ms = value * unit.ms;
    return std::chrono::milliseconds{negative ? -ms : ms};
  }
  return Malformed(text);
}

std::string FormatDuration(std::chrono::milliseconds duration) {
  const int64_t ms = duration.count();
  if (ms == 0) {
    return "0s";
  }
  for (auto it = std::rbegin(kUnits); it != std::rend(kUnits); ++it) {
    if (ms % it->ms == 0) {
      return std::to_string(ms / it->ms) + std::string(it->suffix);
    }
  }
  return std::to_string(ms) + "ms";
}

}  // namespace room_outbox::core
