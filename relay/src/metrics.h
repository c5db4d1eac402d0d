// The relay's metrics: lock-free counters and gauges, rendered in the Prometheus text format.
//
//   room_outbox_pending_total             gauge    pending rows in the outbox (from Stats)
//   room_outbox_oldest_pending_age_ms     gauge    age of the oldest pending row (from Stats)
//   room_outbox_publish_success_total     counter  rows delivered (published or skipped)
//   room_outbox_publish_failure_total     counter  failed attempts (incl. rate-limited, undecodable)
//   room_outbox_publish_latency_ms        histogram latency of each publish attempt
//   room_outbox_rooms_held_back           gauge    rooms whose later rows wait behind a failed row
//   room_outbox_rounds_total / room_outbox_round_errors_total  counters of claim rounds
//
// Thread-safety: every method may be called from any thread (the /metrics server reads while the
// worker writes).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "result.h"

namespace room_outbox::relay {

class Metrics {
 public:
  // Upper bounds (ms) of the latency buckets; a +Inf bucket follows.
  static constexpr std::array<int64_t, 12> kLatencyBucketsMs = {5,   10,   25,   50,   100,  250,
                                                                500, 1000, 2500, 5000, 10000, 30000};

  void AddPublishSuccess(uint64_t n = 1) { success_.fetch_add(n, std::memory_order_relaxed); }
  void AddPublishFailure(uint64_t n = 1) { failure_.fetch_add(n, std::memory_order_relaxed); }
  void ObservePublishLatency(int64_t latency_ms);
  void SetPending(int64_t pending, int64_t oldest_pending_age_ms);
  void SetRoomsHeldBack(int64_t rooms) { rooms_held_back_.store(rooms, std::memory_order_relaxed); }
  void AddRound(bool failed);

  uint64_t publish_success() const { return success_.load(std::memory_order_relaxed); }
  uint64_t publish_failure() const { return failure_.load(std::memory_order_relaxed); }
  int64_t pending() const { return pending_.load(std::memory_order_relaxed); }
  int64_t oldest_pending_age_ms() const { return oldest_age_ms_.load(std::memory_order_relaxed); }
  int64_t rooms_held_back() const { return rooms_held_back_.load(std::memory_order_relaxed); }
  uint64_t latency_count() const { return latency_count_.load(std::memory_order_relaxed); }

  // Prometheus text exposition format 0.0.4.
  std::string RenderPrometheus() const;

 private:
  std::atomic<uint64_t> success_{0};
  std::atomic<uint64_t> failure_{0};
  std::atomic<int64_t> pending_{0};
  std::atomic<int64_t> oldest_age_ms_{0};
  std::atomic<int64_t> rooms_held_back_{0};
  std::atomic<uint64_t> rounds_{0};
  std::atomic<uint64_t> round_errors_{0};
  // Per-bucket (non-cumulative) counts; the +Inf bucket is the last.
  std::array<std::atomic<uint64_t>, kLatencyBucketsMs.size() + 1> buckets_{};
  std::atomic<uint64_t> latency_count_{0};
  std::atomic<int64_t> latency_sum_ms_{0};
};

// GET /metrics over HTTP on `listen` ("host:port"), served by a cpp-httplib thread.
class MetricsServer {
 public:
  // Binds and starts serving; fails (kUnavailable) when the address cannot be bound.
  static Result<std::unique_ptr<MetricsServer>> Start(const std::string& listen,
                                                      const Metrics& metrics);
  ~MetricsServer();  // stops the server and joins its thread
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  int port() const { return port_; }

 private:
  struct State;
  explicit MetricsServer(std::unique_ptr<State> state, int port);
  std::unique_ptr<State> state_;
  int port_;
};

}  // namespace room_outbox::relay
