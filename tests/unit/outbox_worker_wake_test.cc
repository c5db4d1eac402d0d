// OutboxWorker and wake-ups (StopSignal::Wake, fed by the [wake] socket): a wake-up ends the idle
// wait between rounds, never a paced room's wait inside a round; one that arrives during a round
// ends the next idle wait at once; one taken before a claim is consumed by it; bursts are one
// round; while the breaker is open the loop still waits poll_interval; --once ignores them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "worker/outbox_worker.h"
#include "worker_fixture.h"

namespace room_outbox::relay {
namespace {

using ::room_outbox::testing::FailedWith;
using ::room_outbox::testing::Published;
using std::chrono::milliseconds;
using ::testing::_;
using ::testing::ElementsAre;
using ::testing::Invoke;
using ::testing::Return;

// The worker's collaborators (tests/mocks/worker_fixture.h): marks that succeed, and a publisher
// that delivers every row and counts its waves.
class OutboxWorkerWakeTest : public ::room_outbox::testing::WorkerFixture {
 protected:
  OutboxWorkerWakeTest() {
    RecordMarks();
    EXPECT_CALL(publisher_, PublishMany(_, _, _))
        .WillRepeatedly(
            Invoke([this](std::span<const PublishMessage> messages, milliseconds, size_t) {
              ++waves_;
              if (during_publish_) during_publish_();
              return std::vector<PublishOutcome>(messages.size(), Published());
            }));
  }

  // Stops the loop after its `n`-th sleep.
  void StopAfterSleeps(size_t n) {
    clock_.on_sleep = [this, n] {
      if (clock_.sleeps().size() == n) stop_.RequestStop();
    };
  }

  int waves_ = 0;
};

TEST_F(OutboxWorkerWakeTest, WithoutAWakeUpTheLoopPollsAtPollInterval) {
  EXPECT_CALL(store_, ClaimDue(_)).WillRepeatedly(Return(MakeClaim({})));
  StopAfterSleeps(2);
  auto worker = MakeWorker();
  worker.Run();
  EXPECT_THAT(clock_.sleeps(), ElementsAre(milliseconds(1000), milliseconds(1000)));
}

TEST_F(OutboxWorkerWakeTest, AWakeUpDuringARoundEndsTheNextIdleWaitAtOnce) {
  EXPECT_CALL(store_, ClaimDue(_))
      .WillOnce(Return(MakeClaim({Row(1, "room-a")})))
      .WillRepeatedly(Return(MakeClaim({})));
  // A commit after the claim started: its row is not in this claim.
  during_publish_ = [this] { stop_.Wake(); };
  StopAfterSleeps(2);
  auto worker = MakeWorker();
  worker.Run();
  // Round 1 (not full) would idle 1000 ms; the wake-up made it 0 and round 2 claimed at once,
  // taking the wake-up, so round 2 idles the whole poll_interval.
  EXPECT_THAT(clock_.sleeps(), ElementsAre(milliseconds(0), milliseconds(1000)));
  EXPECT_FALSE(stop_.wake_pending());
}

TEST_F(OutboxWorkerWakeTest, AWakeUpTakenBeforeTheClaimIsConsumedByIt) {
  EXPECT_CALL(store_, ClaimDue(_)).WillRepeatedly(Invoke([this](const ClaimOptions&) {
    // The claim runs after the worker took the wake-up.
    EXPECT_FALSE(stop_.wake_pending());
    return Result<Claim>(MakeClaim({Row(1, "room-a")}));
  }));
  stop_.Wake();  // rows committed before the loop's first claim
  StopAfterSleeps(1);
  auto worker = MakeWorker();
  worker.Run();
  EXPECT_THAT(clock_.sleeps(), ElementsAre(milliseconds(1000)));
}

TEST_F(OutboxWorkerWakeTest, ABurstOfWakeUpsIsOneMoreRound) {
  int claims = 0;
  EXPECT_CALL(store_, ClaimDue(_)).WillRepeatedly(Invoke([&](const ClaimOptions&) {
    ++claims;
    return Result<Claim>(MakeClaim(claims == 1 ? std::vector<OutboxRow>{Row(1, "room-a")}
                                               : std::vector<OutboxRow>{}));
  }));
  during_publish_ = [this] {
    for (int i = 0; i < 50; ++i) stop_.Wake();
  };
  StopAfterSleeps(2);
  auto worker = MakeWorker();
  worker.Run();
  EXPECT_EQ(claims, 2);
  EXPECT_THAT(clock_.sleeps(), ElementsAre(milliseconds(0), milliseconds(1000)));
}

TEST_F(OutboxWorkerWakeTest, AWakeUpNeverShortensAPacedRoomsWaitInsideARound) {
  options_.room_min_interval = milliseconds(50);
  EXPECT_CALL(store_, ClaimDue(_))
      .WillOnce(Return(MakeClaim({Row(1, "room-a"), Row(2, "room-a")})))
      .WillRepeatedly(Return(MakeClaim({})));
  during_publish_ = [this] {
    clock_.Advance(milliseconds(20));
    stop_.Wake();
  };
  StopAfterSleeps(3);
  auto worker = MakeWorker();
  worker.Run();
  // Row 2 waits the rest of room-a's room_min_interval (30 ms) with the wake-up pending; then the
  // idle wait ends at once; round 2 found nothing and idles poll_interval.
  EXPECT_EQ(waves_, 2);
  EXPECT_THAT(clock_.sleeps(), ElementsAre(milliseconds(30), milliseconds(0), milliseconds(1000)));
}

TEST_F(OutboxWorkerWakeTest, WhileTheBreakerIsOpenAWakeUpDoesNotEndThePollIntervalWait) {
  breaker_open_ = true;
  EXPECT_CALL(store_, ClaimDue(_)).WillRepeatedly(Invoke([this](const ClaimOptions&) {
    stop_.Wake();  // every commit during an IM outage leaves its rows and wakes the relay
    return Result<Claim>(MakeClaim({Row(1, "room-a")}));
  }));
  EXPECT_CALL(publisher_, PublishMany(_, _, _))
      .WillRepeatedly(Invoke([](std::span<const PublishMessage> messages, milliseconds, size_t) {
        return std::vector<PublishOutcome>(
            messages.size(), FailedWith(PublishStatus::kNotAttempted, "not attempted"));
      }));
  StopAfterSleeps(3);
  auto worker = MakeWorker();
  worker.Run();
  // No hot loop of claims given back: every wait is the whole poll_interval.
  EXPECT_TRUE(stop_.wake_pending());
  EXPECT_THAT(clock_.sleeps(),
              ElementsAre(milliseconds(1000), milliseconds(1000), milliseconds(1000)));
}

TEST_F(OutboxWorkerWakeTest, ADatabaseErrorBackOffIsNotEndedByAWakeUp) {
  EXPECT_CALL(store_, ClaimDue(_))
      .WillOnce(Invoke([this](const ClaimOptions&) {
        stop_.Wake();  // a commit while the claim fails
        return Result<Claim>(tl::unexpected(Error{ErrorCode::kUnavailable, "server gone"}));
      }))
      .WillRepeatedly(Return(MakeClaim({})));
  StopAfterSleeps(2);
  auto worker = MakeWorker();
  worker.Run();
  // The back-off (poll_interval at first) runs in full with the wake-up pending; the next
  // claim takes it, and the idle wait after that claim is poll_interval.
  EXPECT_THAT(clock_.sleeps(), ElementsAre(milliseconds(1000), milliseconds(1000)));
}

TEST_F(OutboxWorkerWakeTest, DrainIgnoresWakeUps) {
  EXPECT_CALL(store_, ClaimDue(_))
      .WillOnce(Return(MakeClaim({Row(1, "room-a")})))
      .WillOnce(Return(MakeClaim({})));
  during_publish_ = [this] { stop_.Wake(); };
  auto worker = MakeWorker();
  DrainResult drain = worker.Drain();
  EXPECT_TRUE(drain.ok());
  EXPECT_EQ(drain.rounds, 2u);
  EXPECT_TRUE(clock_.sleeps().empty());
}

}  // namespace
}  // namespace room_outbox::relay
