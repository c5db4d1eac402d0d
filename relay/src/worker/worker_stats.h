// WorkerStats: the outbox's gauges, read from RelayStore::Stats at most once per stats_interval
// (monotonic): pending, the oldest pending row's age, rooms_held_back, rooms_waiting and
// rooms_backlogged. The read runs on the worker's thread and its cost follows the backlog (the
// pending rows, the rooms backlogged), so it is spaced to at least kStatsReadSpacing times its own
// last duration (at most kMaxStatsInterval apart): the worker spends at most 1/kStatsReadSpacing of
// its time on it, however large the backlog. A failed read is a warning; the gauges keep their
// last values.
//
// One thread (the worker's).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "core/clock.h"
#include "store/relay_store.h"
#include "telemetry/log_line.h"
#include "telemetry/metrics.h"

namespace room_outbox::relay {

// The least gap between two Stats reads, as a multiple of the last read's duration.
inline constexpr int64_t kStatsReadSpacing = 20;
// The gap never grows beyond this (well within Metrics' stats_stale_after of 30 s).
inline constexpr std::chrono::milliseconds kMaxStatsInterval{15000};

class WorkerStats {
 public:
  // Every reference must outlive the stats.
  WorkerStats(std::chrono::milliseconds stats_interval, RelayStore& store, core::Clock& clock,
              Metrics& metrics, Logger& logger, std::string node_id);

  // After a round that held `rooms_held` rooms back: reads Stats when stats_interval has passed
  // since the last read (or none was made), then sets the gauges.
  void AfterRound(size_t rooms_held);

  // The rooms_held_back gauge: the database's count (OutboxStats::rooms_held_back) once Stats
  // could be read; before the first read, the rooms the latest round held back.
  static int64_t HeldBackGauge(const std::optional<OutboxStats>& stats,
                               size_t rooms_held_last_round);

 private:
  void Refresh();

  std::chrono::milliseconds stats_interval_;
  RelayStore& store_;
  core::Clock& clock_;
  Metrics& metrics_;
  Logger& logger_;
  std::string node_id_;
  std::optional<OutboxStats> last_stats_;  // the latest Stats read, if any
  int64_t last_read_steady_ms_ = 0;
  int64_t interval_ms_ = 0;  // the gap before the next read: stats_interval or more
  bool read_ = false;
};

}  // namespace room_outbox::relay
