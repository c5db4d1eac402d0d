// WorkerHarness: the relay's OutboxWorker wired as outbox-relay wires it (MariaDbRelayStore,
// TencentImPublisher, SystemLoopClock, Metrics, a Logger), aimed at a benchmark database and a fake
// IM server. The worker's log lines are discarded: the benchmarks read Metrics and the database.
//
// Use either the daemon loop on a background thread (Start/Stop: OutboxWorker::Run) or single
// rounds on the caller's thread (worker().RunRound()), not both at once.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <thread>

#include "core/publisher.h"
#include "daemon/wake_listener.h"
#include "room_outbox/options.h"
#include "store/mariadb_relay_store.h"
#include "telemetry/log_line.h"
#include "telemetry/metrics.h"
#include "worker/loop_clock.h"
#include "worker/outbox_worker.h"

namespace room_outbox::bench {

class WorkerHarness {
 public:
  // `claim_ahead`: the worker gets a second store for its claim ahead, as outbox-relay does.
  WorkerHarness(const MysqlOptions& mysql, const TencentImOptions& im, relay::WorkerOptions options,
                bool claim_ahead = true);
  ~WorkerHarness();  // Stop()
  WorkerHarness(const WorkerHarness&) = delete;
  WorkerHarness& operator=(const WorkerHarness&) = delete;

  // OutboxWorker::Run on a background thread.
  void Start();
  // Requests a stop and joins (Run finishes and marks its current round first).
  void Stop();
  // A wake-up, as outbox-relay's [wake] socket listener gives one: ends the idle wait (Run).
  void Wake() { stop_.Wake(); }
  // The worker's (discarding) logger, for parts wired beside it.
  relay::Logger& logger() { return *logger_; }

  // Waits until Metrics counts `rows` delivered rows or `limit` passed; true when reached.
  bool WaitForPublished(size_t rows, std::chrono::milliseconds limit) const;

  relay::OutboxWorker& worker() { return *worker_; }
  const relay::Metrics& metrics() const { return metrics_; }
  const relay::WorkerOptions& options() const { return options_; }

 private:
  relay::WorkerOptions options_;
  std::unique_ptr<relay::MariaDbRelayStore> store_;
  std::unique_ptr<relay::MariaDbRelayStore> ahead_store_;  // null without claim ahead
  std::unique_ptr<core::Publisher> publisher_;
  relay::SystemLoopClock clock_;
  relay::LoopSignal stop_;
  relay::Metrics metrics_;
  std::ostream discard_{nullptr};  // no buffer: every write is dropped
  std::unique_ptr<relay::Logger> logger_;
  std::unique_ptr<relay::OutboxWorker> worker_;
  std::thread thread_;
};

// A wake socket bound at `path` whose datagrams wake `relay` (coalesced as outbox-relay does,
// kDefaultWakeMinInterval), counting them into `datagrams`. Throws BenchFailure naming `what`.
std::unique_ptr<relay::WakeListener> ListenForWakes(const std::string& what,
                                                    const std::string& path, WorkerHarness& relay,
                                                    std::atomic<uint64_t>& datagrams);

// The worker's defaults as outbox-relay builds them from an empty [outbox_worker] section.
relay::WorkerOptions DefaultWorkerOptions();

// The shipped [outbox_worker] room_min_interval, e.g. "25ms", for the reports' texts.
std::string ShippedRoomMinInterval();

// "max_in_flight=16, ordering=per_room, batch_size=100, room_min_interval=25ms, poll_interval=1s"
// plus ", requests_per_second=R".
std::string DescribeSettings(const relay::WorkerOptions& options, double requests_per_second);

}  // namespace room_outbox::bench
