// Small shared pieces of the benchmark program: the run context, timing, percentiles, number
// formatting and the failure type.
//
// The benchmark program is a boundary like main(): a setup step that fails (database, stub,
// child process) throws BenchFailure, and main() reports it and exits 1. Library calls return
// Result values; Unwrap turns a failed one into a BenchFailure naming the step.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/result.h"

namespace room_outbox::bench {

class BenchFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The value of `result`, or a BenchFailure "<what>: <error message>".
template <class T>
T Unwrap(core::Result<T> result, const std::string& what) {
  if (!result) {
    throw BenchFailure(what + ": " + result.error().message);
  }
  if constexpr (!std::is_void_v<T>) {
    return std::move(*result);
  }
}

// Sizes and places of one run (main fills it from the command line).
struct BenchContext {
  std::string socket;        // the private MariaDB's unix socket
  std::string relay_binary;  // build/outbox-relay, for the idle benchmark
  std::string work_dir;      // scratch files (relay config, secret, logs)
  size_t drain_rows = 50000;
  size_t rooms = 500;
  int v1_ticks = 10;
  std::chrono::seconds budget_window{15};
  size_t commit_samples = 2000;
  size_t published_rows = 1000000;
  size_t claim_polls = 50;
  std::chrono::seconds idle_window{30};
  size_t latency_commands = 300;
  double latency_commands_per_second = 20;
  size_t busy_room_rows = 1000;  // benchmark 7: rows of the busy room, and of the other rooms
  size_t cost_rows = 10000;      // benchmark 10: rows of each relay drain
  size_t scale_rows = 6000;      // benchmark 11: the backlog, over scale_rooms rooms
  size_t scale_rooms = 300;
  size_t app_limit_rows = 3300;  // benchmark 11g-11i: the backlog against the app-wide limit
  // Benchmark 11m/11n: hot_scale_room_rows rows of one room, then hot_scale_rows over scale_rooms.
  size_t hot_scale_room_rows = 2000;
  size_t hot_scale_rows = 3100;
  size_t thread_commands = 4800;  // benchmark 13: timed commits of each path at each thread count
  size_t pack_rooms = 50;         // benchmark 16: the busy rooms of the backlog
  size_t pack_room_events = 400;  // benchmark 16: the events of each of them
  // Benchmark 17: the rooms of each backlog are scaled by this (1: 2,000 to 100,000 rooms), and a
  // drain stops after this many seconds (0: four times Tencent's bound, at least 90 s).
  double recovery_scale = 1.0;
  double recovery_cap_seconds = 0;
};

// Wall time since construction (steady clock).
class Stopwatch {
 public:
  Stopwatch() : start_(std::chrono::steady_clock::now()) {}
  double Seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }
  double Millis() const { return Seconds() * 1000.0; }

 private:
  std::chrono::steady_clock::time_point start_;
};

// The p-th percentile (0..100, nearest rank) of `samples`; 0 when empty.
double Percentile(std::vector<double> samples, double p);

// Unix epoch milliseconds now.
int64_t NowMs();

// "12,345" style grouping for counts and rates.
std::string FormatCount(double value);
// `value` with `digits` decimals.
std::string FormatFixed(double value, int digits);
// "x12.3" (or "x0.05"): how many times `value` is `base`; "n/a" when base is 0.
std::string FormatRatio(double value, double base);

}  // namespace room_outbox::bench
