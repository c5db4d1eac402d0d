// ClaimStep through its own API, and the claim's part of a round through OutboxWorker.
#include "worker/claim_step.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/envelope_codec.h"
#include "worker/outbox_worker.h"
#include "worker_fixture.h"

namespace room_outbox::relay {
namespace {

using std::chrono::milliseconds;
using ::testing::_;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::Invoke;
using ::testing::Return;

// The worker's collaborators, options and recorded marks: tests/mocks/worker_fixture.h.
class ClaimStepTest : public ::room_outbox::testing::WorkerFixture {};

TEST_F(ClaimStepTest, ADaemonClaimCarriesBatchSizeLeaseAndOrder) {
  RoomPacing pacing(milliseconds(0));
  ClaimStep step(options_, store_, clock_, stop_, pacing, *logger_);
  const ClaimOptions o = step.Options(RoundMode::kDaemon);
  EXPECT_EQ(o.limit, 100u);
  EXPECT_EQ(o.lease_ms, 30000);
  EXPECT_TRUE(o.rooms.per_room_order);
}

TEST_F(ClaimStepTest, AWokenTakeAsksAnyDueFirstAndClaimsNothingWhenNoneIsDue) {
  RoomPacing pacing(milliseconds(0));
  ClaimStep step(options_, store_, clock_, stop_, pacing, *logger_);
  EXPECT_CALL(store_, AnyDue(_)).WillOnce(Return(core::Result<bool>(false)));
  stop_.Wake();
  ClaimAhead::Taken taken = step.Take(RoundMode::kDaemon, true);  // StrictMock: no ClaimDue
  ASSERT_TRUE(taken.claim);
  EXPECT_TRUE(taken.claim->rows.empty());
  EXPECT_FALSE(taken.made_ahead);
  EXPECT_FALSE(stop_.wake_pending()) << "the claim takes the pending wake-up";
}

TEST_F(ClaimStepTest, TheLeaseOfAClaimRunsFromJustBeforeItsCall) {
  RoomPacing pacing(milliseconds(0));
  ClaimStep step(options_, store_, clock_, stop_, pacing, *logger_);
  const int64_t before = clock_.SteadyMs();
  EXPECT_CALL(store_, ClaimDue(_)).WillOnce(Invoke([&](const ClaimOptions&) {
    clock_.Advance(milliseconds(500));  // a slow claim
    return core::Result<Claim>(MakeClaim({Row(1, "room-a")}));
  }));
  ClaimAhead::Taken taken = step.Take(RoundMode::kDaemon, false);
  ASSERT_TRUE(taken.claim);
  EXPECT_EQ(taken.claimed_at, before);
}

TEST_F(ClaimStepTest, AClaimMadeAheadAndNotTakenIsGivenBackOnTheFirstStore) {
  RoomPacing pacing(milliseconds(0));
  ClaimStep step(options_, store_, clock_, stop_, pacing, *logger_, &ahead_store_);
  EXPECT_CALL(ahead_store_, ClaimDue(_)).WillOnce(Return(MakeClaim({Row(1, "room-a")})));
  EXPECT_CALL(store_, Release(kToken, ElementsAre(1))).WillOnce(Return(core::Result<size_t>(1)));
  step.StartAhead(true);
  step.DiscardAhead();
}

TEST_F(ClaimStepTest, AShortClaimStartsNoClaimAhead) {
  RoomPacing paced(milliseconds(500));
  ClaimStep short_claim(options_, store_, clock_, stop_, paced, *logger_, &ahead_store_);
  short_claim.StartAhead(false);  // StrictMock: a ClaimDue on the second store fails
}

TEST_F(ClaimStepTest, ClaimErrorIsARoundErrorAndTheLoopRetriesAfterPollInterval) {
  EXPECT_CALL(store_, ClaimDue(_))
      .WillOnce(Return(core::Fail(ErrorCode::kUnavailable, "mysql_real_connect: can't connect")));
  clock_.on_sleep = [this] {
    if (clock_.sleeps().size() == 2) stop_.RequestStop();
  };
  auto worker = MakeWorker();
  RoundResult first = worker.RunRound();
  ASSERT_TRUE(first.error);
  EXPECT_TRUE(first.store_error);
  EXPECT_EQ(first.error->code, ErrorCode::kUnavailable);

  EXPECT_CALL(store_, ClaimDue(_))
      .WillOnce(Return(core::Fail(ErrorCode::kUnavailable, "server gone")))
      .WillOnce(Return(MakeClaim({})));
  worker.Run();
  EXPECT_THAT(clock_.sleeps(), ElementsAre(milliseconds(1000), milliseconds(1000)));
}

TEST_F(ClaimStepTest, StopRequestedMeansNoNewClaim) {
  stop_.RequestStop();
  auto worker = MakeWorker();
  RoundResult r = worker.RunRound();  // StrictMock: any ClaimDue call fails the test
  EXPECT_EQ(r.claim.claimed, 0u);
  worker.Run();
  DrainResult d = worker.Drain();
  EXPECT_TRUE(d.stopped);
  EXPECT_TRUE(clock_.sleeps().empty());
}

TEST_F(ClaimStepTest, FullBatchStartsTheNextRoundAtOnceAndEmptyWaitsPollInterval) {
  options_.batch_size = 2;
  EXPECT_CALL(store_, ClaimDue(_))
      .WillOnce(Return(MakeClaim({Row(1, "room-a"), Row(2, "room-b")})))
      .WillOnce(Return(MakeClaim({Row(3, "room-a")})));
  ScriptPublisher();
  RecordMarks();
  clock_.on_sleep = [this] { stop_.RequestStop(); };
  auto worker = MakeWorker();
  worker.Run();
  EXPECT_THAT(published_, ElementsAre(1, 2, 3));
  // Round 1 was full: round 2 followed without a sleep. Round 2 was not full: one poll_interval.
  EXPECT_THAT(clock_.sleeps(), ElementsAre(milliseconds(1000)));
}

TEST_F(ClaimStepTest, ShortClaimWithMoreDueStartsTheNextRoundButAnEmptyOneWaits) {
  // Per-room order can leave part of a full selection out: the claim is short, yet more rows are
  // due. An empty claim waits even then, so a selection that keeps nothing cannot spin.
  options_.batch_size = 10;
  relay::Claim short_claim = MakeClaim({Row(1, "room-a")});
  short_claim.more_due = true;
  relay::Claim empty_claim = MakeClaim({});
  empty_claim.more_due = true;
  EXPECT_CALL(store_, ClaimDue(_)).WillOnce(Return(short_claim)).WillOnce(Return(empty_claim));
  ScriptPublisher();
  RecordMarks();
  clock_.on_sleep = [this] { stop_.RequestStop(); };
  auto worker = MakeWorker();
  worker.Run();
  EXPECT_THAT(published_, ElementsAre(1));
  EXPECT_THAT(clock_.sleeps(), ElementsAre(milliseconds(1000)));
}

TEST_F(ClaimStepTest, PacedRoundsCutRoomsAtAPollIntervalOfSendsButDrainDoesNot) {
  options_.room_min_interval = milliseconds(50);
  options_.skip_event_types = {"RoomHeatChanged"};
  // A round may send a room poll_interval / room_min_interval rows: 1000 / 50; rows of types
  // that are never sent do not count.
  EXPECT_CALL(store_, ClaimDue(Field(&relay::ClaimOptions::rooms,
                                     AllOf(Field(&relay::RoomRules::run_cut_rows, 20u),
                                           Field(&relay::RoomRules::room_min_interval_ms, 50),
                                           Field(&relay::RoomRules::skip_event_types,
                                                 ElementsAre("RoomHeatChanged"))))))
      .WillOnce(Return(MakeClaim({})));
  auto worker = MakeWorker();
  worker.RunRound();
  // --once ends when nothing is due, so it must not schedule rows for later: whole runs.
  EXPECT_CALL(store_, ClaimDue(Field(&relay::ClaimOptions::rooms,
                                     Field(&relay::RoomRules::run_cut_rows, 0u))))
      .WillOnce(Return(MakeClaim({})));
  worker.Drain();

  // Without room_min_interval nothing is cut.
  options_.room_min_interval = milliseconds(0);
  EXPECT_CALL(store_, ClaimDue(Field(&relay::ClaimOptions::rooms,
                                     Field(&relay::RoomRules::run_cut_rows, 0u))))
      .WillOnce(Return(MakeClaim({})));
  auto unpaced = MakeWorker();
  unpaced.RunRound();
}

}  // namespace
}  // namespace room_outbox::relay
