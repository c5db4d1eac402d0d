// OutboxWorker and wake-ups (LoopSignal::Wake, fed by the [wake] socket): a wake-up ends the idle
// wait between rounds, never a paced room's wait inside a round; one that arrives during a round
// ends the next idle wait as soon as WakeGap allows (wake_min_interval after the round's start);
// a woken round asks AnyDue before it claims; woken rounds that find nothing widen the gap up to
// kMaxWakeGap and a claimed row narrows it again; one taken before a claim is consumed by it;
// bursts are one round; while the breaker is open the loop still waits poll_interval; --once
// ignores them.
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
using ::testing::InvokeWithoutArgs;
using ::testing::Return;

// The worker's collaborators (tests/mocks/worker_fixture.h): marks that succeed, and a publisher
// that delivers every row and counts its waves.
class OutboxWorkerWakeTest : public ::room_outbox::testing::WorkerFixture {
 protected:
  OutboxWorkerWakeTest() {
    RecordMarks();
    EXPECT_CALL(publisher_, PublishMany(_, _, _))
        .WillRepeatedly(
            Invoke([this](std::span<const core::PublishMessage> messages, milliseconds, size_t) {
              ++waves_;
              if (during_publish_) during_publish_();
              return std::vector<core::PublishOutcome>(messages.size(), Published());
            }));
    EXPECT_CALL(store_, AnyDue(_)).WillRepeatedly(Return(core::Result<bool>(true)));
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

// A claim that saw a pending row coming due before the poll (a sync lease nobody releases, in
// 300 ms) has the idle wait end when it does (one millisecond past it), not at poll_interval; a
// later row than the poll changes nothing.
TEST_F(OutboxWorkerWakeTest, TheIdleWaitEndsWhenTheEarliestPendingRowComesDue) {
  relay::Claim soon = MakeClaim({});
  soon.next_due_in_ms = 300;
  relay::Claim late = MakeClaim({});
  late.next_due_in_ms = 5000;
  EXPECT_CALL(store_, ClaimDue(_))
      .WillOnce(Return(core::Result<relay::Claim>(soon)))
      .WillOnce(Return(core::Result<relay::Claim>(late)));
  StopAfterSleeps(2);
  auto worker = MakeWorker();
  worker.Run();
  EXPECT_THAT(clock_.sleeps(), ElementsAre(milliseconds(301), milliseconds(1000)));
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
  // Round 1 (not full) would idle 1000 ms; the wake-up ended that wait wake_min_interval (10 ms)
  // after round 1 started and round 2 claimed, taking the wake-up, so round 2 idles the whole
  // poll_interval.
  EXPECT_THAT(clock_.sleeps(), ElementsAre(milliseconds(10), milliseconds(1000)));
  EXPECT_FALSE(stop_.wake_pending());
}

TEST_F(OutboxWorkerWakeTest, AWakeUpTakenBeforeTheClaimIsConsumedByIt) {
  EXPECT_CALL(store_, ClaimDue(_)).WillRepeatedly(Invoke([this](const relay::ClaimOptions&) {
    // The claim runs after the worker took the wake-up.
    EXPECT_FALSE(stop_.wake_pending());
    return core::Result<relay::Claim>(MakeClaim({Row(1, "room-a")}));
  }));
  stop_.Wake();  // rows committed before the loop's first claim
  StopAfterSleeps(1);
  auto worker = MakeWorker();
  worker.Run();
  EXPECT_THAT(clock_.sleeps(), ElementsAre(milliseconds(1000)));
}

TEST_F(OutboxWorkerWakeTest, ABurstOfWakeUpsIsOneMoreRound) {
  int claims = 0;
  EXPECT_CALL(store_, ClaimDue(_)).WillRepeatedly(Invoke([&](const relay::ClaimOptions&) {
    ++claims;
    return core::Result<relay::Claim>(
        MakeClaim(claims == 1 ? std::vector<relay::OutboxRow>{Row(1, "room-a")}
                              : std::vector<relay::OutboxRow>{}));
  }));
  during_publish_ = [this] {
    for (int i = 0; i < 50; ++i) stop_.Wake();
  };
  StopAfterSleeps(2);
  auto worker = MakeWorker();
  worker.Run();
  EXPECT_EQ(claims, 2);
  EXPECT_THAT(clock_.sleeps(), ElementsAre(milliseconds(10), milliseconds(1000)));
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
  int claims = 0;
  EXPECT_CALL(store_, AnyDue(_)).WillRepeatedly(InvokeWithoutArgs([&] {
    ++claims;
    return core::Result<bool>(true);
  }));
  StopAfterSleeps(2);
  auto worker = MakeWorker();
  worker.Run();
  // Row 2 waits the rest of room-a's room_min_interval (30 ms) with the wake-up pending; the
  // round took 50 ms, more than wake_min_interval, so the idle wait ends without a sleep; round 2
  // (woken) found nothing and idles poll_interval.
  EXPECT_EQ(waves_, 2);
  EXPECT_EQ(claims, 1);
  EXPECT_THAT(clock_.sleeps(), ElementsAre(milliseconds(30), milliseconds(1000)));
}

// A flood of datagrams that bring no rows: every round is followed by more wake-ups, yet woken
// rounds come no sooner than the gap, each costs one AnyDue and no claim, and the gap doubles up
// to kMaxWakeGap (50 ms); a row committed during the flood is claimed by the next woken round,
// and the gap is back at wake_min_interval (10 ms).
TEST_F(OutboxWorkerWakeTest, AFloodOfWakeUpsIsAtMostOneDueCheckPerGap) {
  auto woken_then = [this](bool due) {
    return [this, due] {
      stop_.Wake();
      return core::Result<bool>(due);
    };
  };
  EXPECT_CALL(store_, AnyDue(_))
      .WillOnce(InvokeWithoutArgs(woken_then(false)))
      .WillOnce(InvokeWithoutArgs(woken_then(false)))
      .WillOnce(InvokeWithoutArgs(woken_then(false)))
      .WillOnce(InvokeWithoutArgs(woken_then(true)))
      .WillRepeatedly(InvokeWithoutArgs(woken_then(false)));
  int claims = 0;
  EXPECT_CALL(store_, ClaimDue(_)).WillRepeatedly(Invoke([&](const relay::ClaimOptions&) {
    stop_.Wake();
    ++claims;
    return core::Result<relay::Claim>(
        MakeClaim(claims == 2 ? std::vector<relay::OutboxRow>{Row(1, "room-a")}
                              : std::vector<relay::OutboxRow>{}));
  }));
  StopAfterSleeps(6);
  auto worker = MakeWorker();
  worker.Run();
  EXPECT_EQ(claims, 2);  // the first round's, and the one a due row made
  EXPECT_EQ(waves_, 1);
  EXPECT_THAT(clock_.sleeps(), ElementsAre(milliseconds(10), milliseconds(20), milliseconds(40),
                                           milliseconds(50), milliseconds(10), milliseconds(20)));
}

TEST_F(OutboxWorkerWakeTest, WhileTheBreakerIsOpenAWakeUpDoesNotEndThePollIntervalWait) {
  breaker_open_ = true;
  EXPECT_CALL(store_, ClaimDue(_)).WillRepeatedly(Invoke([this](const relay::ClaimOptions&) {
    stop_.Wake();  // every commit during an IM outage leaves its rows and wakes the relay
    return core::Result<relay::Claim>(MakeClaim({Row(1, "room-a")}));
  }));
  EXPECT_CALL(publisher_, PublishMany(_, _, _))
      .WillRepeatedly(
          Invoke([](std::span<const core::PublishMessage> messages, milliseconds, size_t) {
            return std::vector<core::PublishOutcome>(
                messages.size(), FailedWith(core::PublishStatus::kNotAttempted, "not attempted"));
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
      .WillOnce(Invoke([this](const relay::ClaimOptions&) {
        stop_.Wake();  // a commit while the claim fails
        return core::Result<relay::Claim>(
            tl::unexpected(Error{ErrorCode::kUnavailable, "server gone"}));
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
