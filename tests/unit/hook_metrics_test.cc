// The hook's metrics with plain values: the Prometheus text of snapshots (HookMetricsText), the
// counters' mapping of sync publish outcomes and commit durations (HookCounters), and the exact
// decimals the text writes (core/prometheus_text.h).
#include "room_outbox/hook_metrics.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "core/prometheus_text.h"
#include "core/publisher.h"
#include "hook_counters.h"

namespace room_outbox::internal {
namespace {

using std::chrono::microseconds;

TEST(PrometheusTextTest, DecimalWritesScaledValuesExactly) {
  EXPECT_EQ(core::prom::Decimal(2500, 1000000), "0.0025");
  EXPECT_EQ(core::prom::Decimal(1000000, 1000000), "1");
  EXPECT_EQ(core::prom::Decimal(12345678, 1000000), "12.345678");
  EXPECT_EQ(core::prom::Decimal(0, 1000000), "0");
  EXPECT_EQ(core::prom::Decimal(30000, 1), "30000");
  EXPECT_EQ(core::prom::LabelValue("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
}

HookMetrics Sample() {
  HookMetrics m;
  m.commits_committed = 7;
  m.commits_duplicate = 2;
  m.commits_failed = 1;
  m.commits_unknown = 0;
  m.sync_published = 5;
  m.sync_failed = 3;
  m.sync_timeout = 1;
  m.sync_skipped_breaker_open = 4;
  m.sync_skipped_command_failed = 2;
  m.sync_skipped_room_refused = 8;
  m.sync_breaker_open = true;
  m.rows_left_to_relay = 9;
  m.late_marks_waiting = 11;
  m.late_marks_written = 12;
  m.late_marks_dropped = 13;
  m.events_committed = 14;
  m.publish_success = 15;
  m.commit_duration_buckets[0] = 6;   // <= 1 ms
  m.commit_duration_buckets[3] = 3;   // <= 10 ms
  m.commit_duration_buckets[13] = 1;  // +Inf
  m.commit_duration_count = 10;
  m.commit_duration_sum_us = 12500250;
  return m;
}

TEST(HookMetricsTextTest, OneUnnamedHookHasNoHookLabel) {
  const std::string text = HookMetricsText({LabelledHookMetrics{"", Sample()}});
  EXPECT_EQ(text.find("hook="), std::string::npos) << text;
  const char* expected_lines[] = {
      "# HELP room_outbox_hook_commits_total Commit calls by outcome.\n"
      "# TYPE room_outbox_hook_commits_total counter\n"
      "room_outbox_hook_commits_total{outcome=\"committed\"} 7\n"
      "room_outbox_hook_commits_total{outcome=\"duplicate\"} 2\n"
      "room_outbox_hook_commits_total{outcome=\"failed\"} 1\n"
      "room_outbox_hook_commits_total{outcome=\"unknown\"} 0\n",
      "room_outbox_hook_sync_publishes_total{outcome=\"published\"} 5\n"
      "room_outbox_hook_sync_publishes_total{outcome=\"failed\"} 3\n"
      "room_outbox_hook_sync_publishes_total{outcome=\"timeout\"} 1\n"
      "room_outbox_hook_sync_publishes_total{outcome=\"rate_limited\"} 0\n",
      "room_outbox_hook_sync_skipped_total{reason=\"sync_off\"} 0\n"
      "room_outbox_hook_sync_skipped_total{reason=\"breaker_open\"} 4\n",
      "room_outbox_hook_sync_skipped_total{reason=\"command_failed\"} 2\n"
      "room_outbox_hook_sync_skipped_total{reason=\"room_refused\"} 8\n",
      "# TYPE room_outbox_hook_sync_breaker_open gauge\nroom_outbox_hook_sync_breaker_open 1\n",
      "# TYPE room_outbox_hook_rows_left_to_relay_total counter\n"
      "room_outbox_hook_rows_left_to_relay_total 9\n",
      "# TYPE room_outbox_hook_events_committed_total counter\n"
      "room_outbox_hook_events_committed_total 14\n",
      "# TYPE room_outbox_hook_publish_success_total counter\n"
      "room_outbox_hook_publish_success_total 15\n",
      "# TYPE room_outbox_hook_late_marks_waiting gauge\nroom_outbox_hook_late_marks_waiting 11\n",
      "# TYPE room_outbox_hook_late_marks_written_total counter\n"
      "room_outbox_hook_late_marks_written_total 12\n",
      "# TYPE room_outbox_hook_late_marks_dropped_total counter\n"
      "room_outbox_hook_late_marks_dropped_total 13\n",
      "# TYPE room_outbox_hook_commit_duration_seconds histogram\n"
      "room_outbox_hook_commit_duration_seconds_bucket{le=\"0.001\"} 6\n"
      "room_outbox_hook_commit_duration_seconds_bucket{le=\"0.0025\"} 6\n"
      "room_outbox_hook_commit_duration_seconds_bucket{le=\"0.005\"} 6\n"
      "room_outbox_hook_commit_duration_seconds_bucket{le=\"0.01\"} 9\n",
      "room_outbox_hook_commit_duration_seconds_bucket{le=\"10\"} 9\n"
      "room_outbox_hook_commit_duration_seconds_bucket{le=\"+Inf\"} 10\n"
      "room_outbox_hook_commit_duration_seconds_sum 12.50025\n"
      "room_outbox_hook_commit_duration_seconds_count 10\n",
  };
  for (const char* lines : expected_lines) {
    EXPECT_NE(text.find(lines), std::string::npos) << "missing:\n" << lines << "in:\n" << text;
  }
}

TEST(HookMetricsTextTest, NamedHooksShareEachFamilyAndCarryTheirLabel) {
  HookMetrics other;
  other.commits_committed = 1;
  const std::string text = HookMetricsText(
      {LabelledHookMetrics{"cell-\"a\"", Sample()}, LabelledHookMetrics{"b", other}});
  EXPECT_NE(
      text.find(
          "room_outbox_hook_commits_total{hook=\"cell-\\\"a\\\"\",outcome=\"committed\"} 7\n"
          "room_outbox_hook_commits_total{hook=\"cell-\\\"a\\\"\",outcome=\"duplicate\"} 2\n"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("room_outbox_hook_commits_total{hook=\"b\",outcome=\"committed\"} 1\n"),
            std::string::npos);
  EXPECT_NE(text.find("room_outbox_hook_sync_breaker_open{hook=\"b\"} 0\n"), std::string::npos);
  EXPECT_NE(text.find("room_outbox_hook_commit_duration_seconds_bucket{hook=\"b\",le=\"+Inf\"} 0\n"
                      "room_outbox_hook_commit_duration_seconds_sum{hook=\"b\"} 0\n"
                      "room_outbox_hook_commit_duration_seconds_count{hook=\"b\"} 0\n"),
            std::string::npos)
      << text;
  // Each family's HELP and TYPE once, however many hooks.
  for (const char* family :
       {"room_outbox_hook_commits_total", "room_outbox_hook_sync_publishes_total",
        "room_outbox_hook_sync_skipped_total", "room_outbox_hook_sync_breaker_open",
        "room_outbox_hook_rows_left_to_relay_total", "room_outbox_hook_events_committed_total",
        "room_outbox_hook_publish_success_total", "room_outbox_hook_late_marks_waiting",
        "room_outbox_hook_late_marks_written_total", "room_outbox_hook_late_marks_dropped_total",
        "room_outbox_hook_commit_duration_seconds"}) {
    const std::string type = std::string("# TYPE ") + family + " ";
    const size_t first = text.find(type);
    ASSERT_NE(first, std::string::npos) << family;
    EXPECT_EQ(text.find(type, first + 1), std::string::npos) << family << " twice:\n" << text;
  }
}

TEST(HookMetricsTextTest, SumAddsEveryCounterAndOrsTheBreaker) {
  HookMetrics sum = Sample();
  HookMetrics other;
  other.commits_unknown = 3;
  other.rows_left_to_relay = 1;
  other.sync_skipped_room_refused = 2;
  other.late_marks_waiting = 1;
  other.late_marks_written = 1;
  other.late_marks_dropped = 1;
  other.events_committed = 6;
  other.publish_success = 5;
  other.commit_duration_buckets[13] = 2;
  other.commit_duration_count = 2;
  other.commit_duration_sum_us = 20000000;
  sum += other;
  EXPECT_EQ(sum.commits_committed, 7u);
  EXPECT_EQ(sum.commits_unknown, 3u);
  EXPECT_EQ(sum.rows_left_to_relay, 10u);
  EXPECT_EQ(sum.sync_skipped_room_refused, 10u);
  EXPECT_EQ(sum.late_marks_waiting, 12u);
  EXPECT_EQ(sum.late_marks_written, 13u);
  EXPECT_EQ(sum.late_marks_dropped, 14u);
  EXPECT_EQ(sum.events_committed, 20u);
  EXPECT_EQ(sum.publish_success, 20u);
  EXPECT_TRUE(sum.sync_breaker_open);
  EXPECT_EQ(sum.commit_duration_buckets[13], 3u);
  EXPECT_EQ(sum.commit_duration_count, 12u);
  EXPECT_EQ(sum.commit_duration_sum_us, 32500250u);
}

core::PublishOutcome Outcome(core::PublishStatus status) {
  core::PublishOutcome outcome;
  outcome.status = status;
  return outcome;
}

TEST(HookCountersTest, CountsEachSyncOutcomeUnderItsLabel) {
  HookCounters counters;
  counters.AddSyncPublish(Outcome(core::PublishStatus::kPublished), 3);  // a pack of 3 events
  counters.AddSyncPublish(Outcome(core::PublishStatus::kSkipped), 1);
  counters.AddSyncPublish(Outcome(core::PublishStatus::kUnknown), 2);
  counters.AddSyncPublish(Outcome(core::PublishStatus::kRateLimited), 1);
  counters.AddSyncPublish(Outcome(core::PublishStatus::kRetryable), 1);
  counters.AddSyncPublish(Outcome(core::PublishStatus::kPermanent), 1);
  counters.AddSyncPublish(Outcome(core::PublishStatus::kNotAttempted), 1);
  counters.AddEventsCommitted(9);
  counters.AddSyncSkipped(SyncSkip::kRoomOrder, 3);
  counters.AddSyncSkipped(SyncSkip::kQueueFull, 2);
  counters.AddSyncSkipped(SyncSkip::kRoomRefused, 4);
  counters.AddLeftToRelay(5);
  counters.AddLateMarksWritten(6);
  counters.AddLateMarksDropped(7);
  counters.AddCommit(CommitStatus::kCommitted);
  counters.AddCommit(CommitStatus::kUnknown);
  const HookMetrics m = counters.Snapshot();
  EXPECT_EQ(m.sync_published, 2u);
  EXPECT_EQ(m.publish_success, 3u) << "events IM accepted: the pack's, not the skipped one";
  EXPECT_EQ(m.events_committed, 9u);
  EXPECT_EQ(m.sync_timeout, 1u);
  EXPECT_EQ(m.sync_rate_limited, 1u);
  EXPECT_EQ(m.sync_failed, 3u);
  EXPECT_EQ(m.sync_skipped_room_order, 3u);
  EXPECT_EQ(m.sync_skipped_queue_full, 2u);
  EXPECT_EQ(m.sync_skipped_room_refused, 4u);
  EXPECT_EQ(m.rows_left_to_relay, 5u);
  EXPECT_EQ(m.late_marks_written, 6u);
  EXPECT_EQ(m.late_marks_dropped, 7u);
  EXPECT_EQ(m.late_marks_waiting, 0u) << "the gauge is the Hook's (LateMarks), not a counter";
  EXPECT_EQ(m.commits_committed, 1u);
  EXPECT_EQ(m.commits_unknown, 1u);
  EXPECT_EQ(m.commits_failed, 0u);
}

TEST(HookCountersTest, CommitDurationsFallIntoTheirBuckets) {
  HookCounters counters;
  counters.ObserveCommitDuration(microseconds(1000));      // le 0.001: the bound is inclusive
  counters.ObserveCommitDuration(microseconds(1001));      // le 0.0025
  counters.ObserveCommitDuration(microseconds(-5));        // a clock step back counts as 0
  counters.ObserveCommitDuration(microseconds(60000000));  // +Inf
  const HookMetrics m = counters.Snapshot();
  EXPECT_EQ(m.commit_duration_buckets[0], 2u);
  EXPECT_EQ(m.commit_duration_buckets[1], 1u);
  EXPECT_EQ(m.commit_duration_buckets[13], 1u);
  EXPECT_EQ(m.commit_duration_count, 4u);
  EXPECT_EQ(m.commit_duration_sum_us, 60002001u);  // 1000 + 1001 + 0 + 60000000
}

}  // namespace
}  // namespace room_outbox::internal
