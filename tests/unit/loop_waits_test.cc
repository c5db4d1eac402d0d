// LoopWaits through its own API, and the loop's waits through OutboxWorker::Run.
#include "worker/loop_waits.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>
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
using ::testing::ElementsAre;
using ::testing::Invoke;
using ::testing::Return;

// The worker's collaborators, options and recorded marks: tests/mocks/worker_fixture.h.
class LoopWaitsTest : public ::room_outbox::testing::WorkerFixture {
 protected:
  // Runs the worker against a database whose every claim fails, until it has slept `sleeps`
  // times; returns the sleeps.
  std::vector<milliseconds> RunWithTheDatabaseAway(size_t sleeps) {
    EXPECT_CALL(store_, ClaimDue(_))
        .WillRepeatedly(Return(core::Fail(ErrorCode::kUnavailable, "server gone")));
    clock_.on_sleep = [this, sleeps] {
      if (clock_.sleeps().size() == sleeps) stop_.RequestStop();
    };
    auto worker = MakeWorker();
    worker.Run();
    return clock_.sleeps();
  }
};

TEST_F(LoopWaitsTest, ASleepIsClampedToThePollInterval) {
  RoomPacing pacing(milliseconds(0));
  LoopWaits waits(milliseconds(1000), milliseconds(0), clock_, stop_, pacing);
  EXPECT_FALSE(waits.Sleep(milliseconds(60000)));
  EXPECT_FALSE(waits.Sleep(milliseconds(-5)));
  EXPECT_THAT(clock_.sleeps(), ElementsAre(milliseconds(1000), milliseconds(0)));
}

TEST_F(LoopWaitsTest, AWakeUpEndsTheIdleWaitNoSoonerThanTheGap) {
  RoomPacing pacing(milliseconds(0));
  LoopWaits waits(milliseconds(1000), milliseconds(200), clock_, stop_, pacing);
  const int64_t start = clock_.SteadyMs();
  waits.RoundStarted();
  waits.RoundEnded(false, true);
  stop_.Wake();
  bool woken = false;
  EXPECT_FALSE(waits.IdleUntilWoken(milliseconds(1000), woken));
  EXPECT_TRUE(woken);
  EXPECT_EQ(clock_.SteadyMs() - start, 200) << "the wake-up waited out the gap, not the poll";
  EXPECT_TRUE(stop_.wake_pending()) << "the claim, not the wait, takes the wake-up";
}

TEST_F(LoopWaitsTest, WithoutAWakeUpTheIdleWaitLastsItsDuration) {
  RoomPacing pacing(milliseconds(0));
  LoopWaits waits(milliseconds(1000), milliseconds(200), clock_, stop_, pacing);
  const int64_t start = clock_.SteadyMs();
  bool woken = false;
  EXPECT_FALSE(waits.IdleUntilWoken(milliseconds(700), woken));
  EXPECT_FALSE(woken);
  EXPECT_EQ(clock_.SteadyMs() - start, 700);
}

TEST_F(LoopWaitsTest, TheIdleEndsOneMillisecondAfterTheNextRowComesDue) {
  RoomPacing pacing(milliseconds(0));
  LoopWaits waits(milliseconds(1000), milliseconds(0), clock_, stop_, pacing);
  const int64_t now = clock_.SteadyMs();
  EXPECT_EQ(waits.UntilNextDue(std::nullopt, milliseconds(1000)), milliseconds(1000));
  EXPECT_EQ(waits.UntilNextDue(now + 300, milliseconds(1000)), milliseconds(301));
  EXPECT_EQ(waits.UntilNextDue(now + 5000, milliseconds(1000)), milliseconds(1000));
  EXPECT_EQ(waits.UntilNextDue(now - 50, milliseconds(1000)), milliseconds(1));
}

TEST_F(LoopWaitsTest, RepeatedDatabaseErrorsBackOffUpToTheCap) {
  options_.max_error_backoff = milliseconds(4000);
  EXPECT_THAT(RunWithTheDatabaseAway(5),
              ElementsAre(milliseconds(1000), milliseconds(2000), milliseconds(4000),
                          milliseconds(4000), milliseconds(4000)));
}

// The shipped cap: a failing database is tried at least once a second (at most 1 s after its
// return delivery resumes), and the back-off's line is at warn for the 1st, 2nd, 4th, ... error.
TEST_F(LoopWaitsTest, TheShippedBackOffStopsAtOneSecondAndWarnsAtPowersOfTwo) {
  options_.poll_interval = milliseconds(200);
  EXPECT_THAT(RunWithTheDatabaseAway(6),
              ElementsAre(milliseconds(200), milliseconds(400), milliseconds(800),
                          milliseconds(1000), milliseconds(1000), milliseconds(1000)));
  std::vector<std::string> warned;
  std::vector<std::string> debug;
  std::istringstream lines(log_.str());
  for (std::string line; std::getline(lines, line);) {
    if (line.find("database error: backing off") == std::string::npos) continue;
    const std::string n = line.substr(line.find("consecutive_errors=") + 19, 1);
    (line.rfind("warning ", 0) == 0 ? warned : debug).push_back(n);
  }
  EXPECT_THAT(warned, ElementsAre("1", "2", "4"));
  EXPECT_THAT(debug, ElementsAre("3", "5", "6"));
}

TEST_F(LoopWaitsTest, EmptyClaimSleepsPollInterval) {
  EXPECT_CALL(store_, ClaimDue(_)).WillRepeatedly(Return(MakeClaim({})));
  clock_.on_sleep = [this] {
    if (clock_.sleeps().size() == 3) stop_.RequestStop();
  };
  auto worker = MakeWorker();
  worker.Run();
  EXPECT_THAT(clock_.sleeps(),
              ElementsAre(milliseconds(1000), milliseconds(1000), milliseconds(1000)));
}

TEST_F(LoopWaitsTest, WhileAPacedRoomsRowsComeDueTheLoopPollsAtRoomMinInterval) {
  options_.room_min_interval = milliseconds(50);
  // The first claim cut a room and scheduled its rows up to now + 120ms; the loop claims again
  // at once (more_due). While that time has not passed, a round that delivered is followed by
  // room_min_interval; one that delivered nothing (nothing due, or IM failing) by poll_interval.
  relay::Claim cut = MakeClaim({Row(1, "hot")});
  cut.more_due = true;
  cut.paced_rooms = {relay::PacedRoom{"hot", 3, 120}};
  EXPECT_CALL(store_, ClaimDue(_))
      .WillOnce(Return(cut))
      .WillOnce(Return(MakeClaim({Row(2, "hot")})))
      .WillOnce(Return(MakeClaim({})))
      .WillOnce(Return(MakeClaim({Row(3, "hot")})));
  ScriptPublisher();
  RecordMarks();
  clock_.on_sleep = [this] {
    if (clock_.sleeps().size() == 4) stop_.RequestStop();
  };
  auto worker = MakeWorker();
  worker.Run();
  EXPECT_THAT(published_, ElementsAre(1, 2, 3));
  // Row 2 waits out the room's room_min_interval within its round (50ms); then, at t=50 < 120, the
  // loop idles 50ms. After the empty claim: 1000ms. After row 3 (t=1100, past the schedule):
  // 1000ms.
  EXPECT_THAT(clock_.sleeps(), ElementsAre(milliseconds(50), milliseconds(50), milliseconds(1000),
                                           milliseconds(1000)));
  EXPECT_NE(log_.str().find("room paced"), std::string::npos) << log_.str();
}

TEST_F(LoopWaitsTest, AClaimThatOnlyScheduledPacedRoomsIsFollowedAfterRoomMinInterval) {
  options_.room_min_interval = milliseconds(50);
  // Every room of the window was sent to less than room_min_interval ago: the claim leased
  // nothing and scheduled their rows 30 ms on. The loop claims again after room_min_interval,
  // not poll_interval.
  relay::Claim paced = MakeClaim({});
  paced.more_due = true;
  paced.paced_rooms = {relay::PacedRoom{"hot", 2, 30}};
  EXPECT_CALL(store_, ClaimDue(_)).WillOnce(Return(paced)).WillOnce(Return(MakeClaim({})));
  RecordMarks();
  clock_.on_sleep = [this] {
    if (clock_.sleeps().size() == 2) stop_.RequestStop();
  };
  auto worker = MakeWorker();
  worker.Run();
  EXPECT_THAT(clock_.sleeps(), ElementsAre(milliseconds(50), milliseconds(1000)));
}

TEST_F(LoopWaitsTest, WhileTheBreakerIsOpenTheDaemonWaitsPollIntervalBetweenRounds) {
  breaker_open_ = true;
  std::vector<relay::OutboxRow> rows;
  for (int64_t id = 1; id <= 100; ++id) rows.push_back(Row(id, "room-" + std::to_string(id)));
  EXPECT_CALL(store_, ClaimDue(_)).WillRepeatedly(Return(MakeClaim(rows)));
  EXPECT_CALL(publisher_, PublishMany(_, _, _))
      .WillRepeatedly(
          Invoke([](std::span<const core::PublishMessage> messages, milliseconds, size_t) {
            return std::vector<core::PublishOutcome>(
                messages.size(), FailedWith(core::PublishStatus::kNotAttempted, "not attempted"));
          }));
  RecordMarks();
  int rounds = 0;
  clock_.on_sleep = [&] {
    if (++rounds == 3) stop_.RequestStop();
  };
  auto worker = MakeWorker();
  worker.Run();
  // A full batch would normally be claimed again at once; with the breaker open every round
  // sleeps poll_interval, and no row was charged.
  EXPECT_TRUE(failed_.empty());
  ASSERT_GE(clock_.sleeps().size(), 3u);
  for (milliseconds sleep : clock_.sleeps()) EXPECT_EQ(sleep, options_.poll_interval);
}

}  // namespace
}  // namespace room_outbox::relay
