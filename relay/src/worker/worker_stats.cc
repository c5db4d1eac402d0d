#include "worker/worker_stats.h"

#include <algorithm>
#include <utility>

#include "worker/worker_log.h"

namespace room_outbox::relay {

WorkerStats::WorkerStats(std::chrono::milliseconds stats_interval, RelayStore& store,
                         core::Clock& clock, Metrics& metrics, Logger& logger, std::string node_id)
    : stats_interval_(stats_interval),
      store_(store),
      clock_(clock),
      metrics_(metrics),
      logger_(logger),
      node_id_(std::move(node_id)) {}

void WorkerStats::AfterRound(size_t rooms_held) {
  Refresh();
  metrics_.SetRoomsHeldBack(HeldBackGauge(last_stats_, rooms_held));
}

void WorkerStats::Refresh() {
  const int64_t now = clock_.SteadyMs();
  if (read_ && now - last_read_steady_ms_ < interval_ms_) {
    return;
  }
  read_ = true;
  last_read_steady_ms_ = now;
  auto stats = store_.Stats();
  const int64_t took = clock_.SteadyMs() - now;
  interval_ms_ = std::clamp(took * kStatsReadSpacing, int64_t{stats_interval_.count()},
                            std::max<int64_t>(kMaxStatsInterval.count(), stats_interval_.count()));
  if (!stats) {
    logger_.Warn(
        WorkerLine(node_id_, "outbox stats unavailable").Add("error", stats.error().message));
    return;
  }
  last_stats_ = *stats;
  metrics_.SetPending(stats->pending, stats->oldest_pending_age_ms);
  metrics_.SetRoomsWaiting(stats->rooms_waiting);
  metrics_.SetRoomsBacklogged(stats->rooms_backlogged);
}

int64_t WorkerStats::HeldBackGauge(const std::optional<OutboxStats>& stats,
                                   size_t rooms_held_last_round) {
  // What the database holds (rooms whose head has failed) once it could be read; until then
  // what this round saw.
  return stats ? stats->rooms_held_back : static_cast<int64_t>(rooms_held_last_round);
}

}  // namespace room_outbox::relay
