// Pieces of the Prometheus text exposition format (0.0.4) that the relay's /metrics and the hook's
// metrics text both write: label values, sample values, one-sample families and histograms.
// Pure formatting over plain values; nothing here knows a metric.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <type_traits>

namespace room_outbox::core::prom {

// A label value: backslash, quote and newline escaped.
std::string LabelValue(std::string_view v);

// A sample value: NaN as Prometheus spells it, whole numbers without an exponent, fractions with
// millisecond precision.
std::string Num(double v);

// `value / divisor` written exactly in decimal, without trailing zeros (divisor a power of ten,
// > 0): Decimal(2500, 1000000) is "0.0025", Decimal(3, 1) is "3".
std::string Decimal(int64_t value, int64_t divisor);

// One sample family without labels: HELP, TYPE and the value (floating point as Num spells it).
template <class V>
void Simple(std::ostream& out, const char* name, const char* type, const char* help, V value) {
  out << "# HELP " << name << ' ' << help << "\n# TYPE " << name << ' ' << type << '\n'
      << name << ' ';
  if constexpr (std::is_floating_point_v<V>) {
    out << Num(value);
  } else {
    out << value;
  }
  out << '\n';
}

// The bucket of `value`: the first whose upper bound is >= it, else the +Inf bucket (N).
template <size_t N>
size_t BucketOf(const std::array<int64_t, N>& bounds, int64_t value) {
  size_t i = 0;
  while (i < N && value > bounds[i]) ++i;
  return i;
}

namespace detail {
inline uint64_t Load(const std::atomic<uint64_t>& v) { return v.load(std::memory_order_relaxed); }
inline uint64_t Load(uint64_t v) { return v; }
}  // namespace detail

// One histogram family: `bounds` are the buckets' upper bounds, `counts` the per-bucket
// (non-cumulative) counts with the +Inf bucket last (one more than `bounds`), atomics or plain.
// Each bound is written as Decimal(bound, bound_divisor), so bounds kept in microseconds are
// written in seconds with divisor 1000000. `labels` (e.g. `hook="a",`) precede `le` in each
// bucket and stand alone in braces on _sum and _count; empty: none.
template <size_t N, class Count, class Sum>
void Histogram(std::ostream& out, const char* name, const char* help,
               const std::array<int64_t, N>& bounds, const std::array<Count, N + 1>& counts,
               Sum sum, uint64_t count, int64_t bound_divisor = 1, std::string_view labels = {}) {
  out << "# HELP " << name << ' ' << help << "\n# TYPE " << name << " histogram\n";
  uint64_t cumulative = 0;
  for (size_t i = 0; i < N; ++i) {
    cumulative += detail::Load(counts[i]);
    out << name << "_bucket{" << labels << "le=\"" << Decimal(bounds[i], bound_divisor) << "\"} "
        << cumulative << '\n';
  }
  cumulative += detail::Load(counts[N]);
  std::string_view bare = labels;
  if (!bare.empty() && bare.back() == ',') bare.remove_suffix(1);
  const std::string braces = bare.empty() ? "" : "{" + std::string(bare) + "}";
  out << name << "_bucket{" << labels << "le=\"+Inf\"} " << cumulative << '\n'
      << name << "_sum" << braces << ' ' << sum << '\n'
      << name << "_count" << braces << ' ' << count << '\n';
}

}  // namespace room_outbox::core::prom
