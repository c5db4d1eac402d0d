#include "bench/bench_support.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace room_outbox::bench {

double Percentile(std::vector<double> samples, double p) {
  if (samples.empty()) {
    return 0;
  }
  std::sort(samples.begin(), samples.end());
  const double rank = std::ceil(p / 100.0 * static_cast<double>(samples.size()));
  const size_t index = rank < 1 ? 0 : static_cast<size_t>(rank) - 1;
  return samples[std::min(index, samples.size() - 1)];
}

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string FormatCount(double value) {
  const auto rounded = static_cast<long long>(std::llround(value));
  std::string digits = std::to_string(rounded < 0 ? -rounded : rounded);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) {
      out += ',';
    }
    out += digits[i];
  }
  return rounded < 0 ? "-" + out : out;
}

std::string FormatFixed(double value, int digits) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", digits, value);
  return buffer;
}

std::string FormatRatio(double value, double base) {
  if (base <= 0) {
    return "n/a";
  }
  const double ratio = value / base;
  return "x" + FormatFixed(ratio, ratio >= 10 ? 0 : ratio >= 1 ? 1 : ratio >= 0.1 ? 2 : 3);
}

}  // namespace room_outbox::bench
