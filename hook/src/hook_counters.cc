#include "hook_counters.h"

#include "core/prometheus_text.h"

namespace room_outbox::internal {

void HookCounters::AddCommit(CommitStatus status) {
  const size_t i = static_cast<size_t>(status);
  if (i < commits_.size()) commits_[i].fetch_add(1, std::memory_order_relaxed);
}

void HookCounters::AddSyncPublish(const core::PublishOutcome& outcome, uint64_t events) {
  std::atomic<uint64_t>* counter = &failed_;
  if (outcome.delivered()) {
    counter = &published_;
    if (outcome.status == core::PublishStatus::kPublished) {
      publish_success_.fetch_add(events, std::memory_order_relaxed);
    }
  } else if (outcome.status == core::PublishStatus::kUnknown) {
    counter = &timeout_;
  } else if (outcome.status == core::PublishStatus::kRateLimited) {
    counter = &rate_limited_;
  }
  counter->fetch_add(1, std::memory_order_relaxed);
}

void HookCounters::AddSyncSkipped(SyncSkip reason, uint64_t events) {
  skipped_[static_cast<size_t>(reason)].fetch_add(events, std::memory_order_relaxed);
}

void HookCounters::ObserveCommitDuration(std::chrono::microseconds duration) {
  const int64_t us = duration.count() < 0 ? 0 : duration.count();
  buckets_[core::prom::BucketOf(HookMetrics::kCommitDurationBucketsUs, us)].fetch_add(
      1, std::memory_order_relaxed);
  duration_sum_us_.fetch_add(static_cast<uint64_t>(us), std::memory_order_relaxed);
  duration_count_.fetch_add(1, std::memory_order_relaxed);
}

HookMetrics HookCounters::Snapshot() const {
  HookMetrics m;
  m.commits_committed = Load(commits_[static_cast<size_t>(CommitStatus::kCommitted)]);
  m.commits_duplicate = Load(commits_[static_cast<size_t>(CommitStatus::kDuplicate)]);
  m.commits_failed = Load(commits_[static_cast<size_t>(CommitStatus::kFailed)]);
  m.commits_unknown = Load(commits_[static_cast<size_t>(CommitStatus::kUnknown)]);
  m.sync_published = Load(published_);
  m.sync_failed = Load(failed_);
  m.sync_timeout = Load(timeout_);
  m.sync_rate_limited = Load(rate_limited_);
  m.sync_skipped_sync_off = Load(skipped_[static_cast<size_t>(SyncSkip::kSyncOff)]);
  m.sync_skipped_breaker_open = Load(skipped_[static_cast<size_t>(SyncSkip::kBreakerOpen)]);
  m.sync_skipped_queue_full = Load(skipped_[static_cast<size_t>(SyncSkip::kQueueFull)]);
  m.sync_skipped_room_order = Load(skipped_[static_cast<size_t>(SyncSkip::kRoomOrder)]);
  m.sync_skipped_out_of_time = Load(skipped_[static_cast<size_t>(SyncSkip::kOutOfTime)]);
  m.sync_skipped_command_failed = Load(skipped_[static_cast<size_t>(SyncSkip::kCommandFailed)]);
  m.sync_skipped_room_refused = Load(skipped_[static_cast<size_t>(SyncSkip::kRoomRefused)]);
  m.rows_left_to_relay = Load(left_);
  m.late_marks_written = Load(late_written_);
  m.late_marks_dropped = Load(late_dropped_);
  for (size_t i = 0; i < buckets_.size(); ++i) {
    m.commit_duration_buckets[i] = Load(buckets_[i]);
  }
  m.commit_duration_count = Load(duration_count_);
  m.commit_duration_sum_us = Load(duration_sum_us_);
  m.events_committed = Load(events_committed_);
  m.publish_success = Load(publish_success_);
  return m;
}

}  // namespace room_outbox::internal
