// WorkerStats through its own API, and the gauges a round sets through OutboxWorker.
#include "worker/worker_stats.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/envelope_codec.h"
#include "worker/outbox_worker.h"
#include "worker_fixture.h"

namespace room_outbox::relay {
namespace {

using ::room_outbox::testing::FailedWith;
using std::chrono::milliseconds;
using ::testing::_;
using ::testing::Return;

// The worker's collaborators, options and recorded marks: tests/mocks/worker_fixture.h.
class WorkerStatsTest : public ::room_outbox::testing::WorkerFixture {};

TEST_F(WorkerStatsTest, StatsAreReadAtMostOncePerStatsInterval) {
  OutboxStats read;
  read.pending = 5;
  read.rooms_held_back = 2;
  EXPECT_CALL(store_, Stats()).Times(2).WillRepeatedly(Return(read));
  WorkerStats stats(milliseconds(1000), store_, clock_, metrics_, *logger_, "node-1");
  stats.AfterRound(0);
  clock_.Advance(milliseconds(999));
  stats.AfterRound(0);  // within the interval: no read
  clock_.Advance(milliseconds(1));
  stats.AfterRound(0);
}

TEST_F(WorkerStatsTest, TheHeldBackGaugeIsTheDatabasesCountOnceItWasRead) {
  EXPECT_EQ(WorkerStats::HeldBackGauge(std::nullopt, 3), 3);
  OutboxStats read;
  read.rooms_held_back = 7;
  EXPECT_EQ(WorkerStats::HeldBackGauge(read, 3), 7);
}

TEST_F(WorkerStatsTest, GaugesComeFromStatsAndCountersFromOutcomes) {
  EXPECT_CALL(store_, Stats()).WillRepeatedly(Return(relay::OutboxStats{42, 7000, 0}));
  EXPECT_CALL(store_, ClaimDue(_))
      .WillOnce(Return(MakeClaim({Row(1, "room-a"), Row(2, "room-b")})));
  outcomes_["evt-2"] = {FailedWith(core::PublishStatus::kRetryable, "http 500")};
  ScriptPublisher();
  RecordMarks();
  auto worker = MakeWorker();
  worker.RunRound();
  EXPECT_EQ(metrics_.pending(), 42);
  EXPECT_EQ(metrics_.oldest_pending_age_ms(), 7000);
  EXPECT_EQ(metrics_.publish_success(), 1u);
  EXPECT_EQ(metrics_.publish_failure(), 1u);
  EXPECT_EQ(metrics_.latency_count(), 2u);
}

}  // namespace
}  // namespace room_outbox::relay
