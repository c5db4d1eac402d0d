// HookCounters: what one Hook counts for its metrics (room_outbox/hook_metrics.h). Relaxed
// atomics only, so the commit path and the background thread count without a lock while any
// thread takes a Snapshot; a snapshot is not one instant across counters (each is exact).
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>

#include "core/publisher.h"
#include "room_outbox/hook.h"
#include "room_outbox/hook_metrics.h"

namespace room_outbox::internal {

// Why the sync publish did not try a pending event (the `reason` label).
enum class SyncSkip {
  kSyncOff,        // [hook] sync_publish = "off"
  kBreakerOpen,    // the sync breaker is open
  kQueueFull,      // the background queue is full
  kRoomOrder,      // an earlier event of the room is pending or was left to the relay
  kOutOfTime,      // the command's sync_publish_timeout is spent
  kCommandFailed,  // an earlier event of the same command failed
  kRoomRefused,    // the room's group refused IM frequency control: backed off (room_backoff.h)
};
inline constexpr size_t kSyncSkipCount = 7;

class HookCounters {
 public:
  void AddCommit(CommitStatus status);
  // One IM request of the sync publish (inline or background), carrying `events` events (a pack
  // carries several), and its outcome.
  void AddSyncPublish(const core::PublishOutcome& outcome, uint64_t events);
  // Events a committed command wrote pending (to be sent to IM).
  void AddEventsCommitted(uint64_t events) {
    events_committed_.fetch_add(events, std::memory_order_relaxed);
  }
  void AddSyncSkipped(SyncSkip reason, uint64_t events);
  void AddLeftToRelay(uint64_t rows) { left_.fetch_add(rows, std::memory_order_relaxed); }
  // Rows a late mark marked published (late_marks.h), and waiting marks dropped for the bound.
  void AddLateMarksWritten(uint64_t rows) {
    late_written_.fetch_add(rows, std::memory_order_relaxed);
  }
  void AddLateMarksDropped(uint64_t rows) {
    late_dropped_.fetch_add(rows, std::memory_order_relaxed);
  }
  void ObserveCommitDuration(std::chrono::microseconds duration);

  // The counts so far; sync_breaker_open and late_marks_waiting are the caller's.
  HookMetrics Snapshot() const;

 private:
  static uint64_t Load(const std::atomic<uint64_t>& v) {
    return v.load(std::memory_order_relaxed);
  }

  std::array<std::atomic<uint64_t>, 4> commits_{};  // by CommitStatus
  std::atomic<uint64_t> published_{0};
  std::atomic<uint64_t> publish_success_{0};  // events of the published requests
  std::atomic<uint64_t> events_committed_{0};
  std::atomic<uint64_t> failed_{0};
  std::atomic<uint64_t> timeout_{0};
  std::atomic<uint64_t> rate_limited_{0};
  std::array<std::atomic<uint64_t>, kSyncSkipCount> skipped_{};
  std::atomic<uint64_t> left_{0};
  std::atomic<uint64_t> late_written_{0};
  std::atomic<uint64_t> late_dropped_{0};
  std::array<std::atomic<uint64_t>, HookMetrics::kCommitDurationBucketsUs.size() + 1> buckets_{};
  std::atomic<uint64_t> duration_count_{0};
  std::atomic<uint64_t> duration_sum_us_{0};
};

}  // namespace room_outbox::internal
