// Durations as written in the config: an integer and a unit, e.g. "500ms", "3s", "2m", "24h".
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "core/result.h"

namespace room_outbox::core {

// The largest duration any text parses to: whole hours that still fit in
// std::chrono::nanoseconds (about 292 years), so no duration read from the config overflows
// when a clock adds it to a time point (each key has a far lower maximum of its own:
// duration_limits.h).
inline constexpr std::chrono::milliseconds kMaxDuration{
    std::chrono::hours(std::chrono::nanoseconds::max().count() / 3'600'000'000'000)};

// Parses "<integer><unit>" with unit ms, s, m or h and no spaces. A leading '-' is accepted so that
// the caller can apply the rule "<= 0 means the default"; "0" without a
// unit is zero.
// Anything else ("3 s", "abc", "1y", "1.5s", "", a value above kMaxDuration) fails with
// kInvalidArgument whose message quotes the text and lists the accepted units (or the maximum);
// the caller prefixes the config key.
Result<std::chrono::milliseconds> ParseDuration(std::string_view text);

// The shortest exact spelling: 90000ms -> "90s", 7200000ms -> "2h", 1500ms -> "1500ms".
std::string FormatDuration(std::chrono::milliseconds duration);

}  // namespace room_outbox::core
