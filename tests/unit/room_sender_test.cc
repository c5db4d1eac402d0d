// RoomSender through its own API, and the waves of a round through OutboxWorker.
#include "worker/room_sender.h"

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
using ::room_outbox::testing::Published;
using std::chrono::milliseconds;
using ::testing::_;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Invoke;
using ::testing::Return;
using ::testing::UnorderedElementsAre;

// The worker's collaborators, options and recorded marks: tests/mocks/worker_fixture.h.
class RoomSenderTest : public ::room_outbox::testing::WorkerFixture {};

// A round of `rows` as OutboxWorker hands it to RoomSender: claimed now, queued, nothing given
// back at load.
struct SendUnderTest {
  SendUnderTest(relay::WorkerOptions& options, ::room_outbox::testing::MockRelayStore& store,
                ::room_outbox::testing::MockPublisher& publisher,
                ::room_outbox::testing::FakeClock& clock, LoopSignal& signal,
                relay::Metrics& metrics, Logger& logger, Claim claim)
      : retry(options.poll_interval, options.rate_limited_retry),
        park(0),
        pacing(options.room_min_interval),
        waits(options.poll_interval, options.wake_min_interval, clock, signal, pacing),
        sender(options, publisher, clock, signal, pacing, waits, metrics, logger),
        round(RoundMode::kDaemon, std::move(claim), clock.SteadyMs() + options.lease.count(),
              options.per_room_order(),
              MarkDeps{store, metrics, logger, clock, retry, park, nullptr, options.node_id},
              nullptr) {
    round.queues.Load(round.claim.rows, [](const OutboxRow&) { return false; });
  }
  RetryPolicy retry;
  ParkPolicy park;
  RoomPacing pacing;
  LoopWaits waits;
  RoomSender sender;
  RoundContext round;
};

TEST_F(RoomSenderTest, EachWaveTakesOneRowPerRoomAndIsMarkedBeforeTheNext) {
  ScriptPublisher();
  RecordMarks();
  std::vector<size_t> marked_before_wave;
  during_publish_ = [&] { marked_before_wave.push_back(published_.size()); };
  SendUnderTest s(options_, store_, publisher_, clock_, stop_, metrics_, *logger_,
                  MakeClaim({Row(1, "room-a"), Row(2, "room-a"), Row(3, "room-b")}));
  const SendOutcome sent = s.sender.Send(s.round);
  EXPECT_EQ(sent.waves, 2u);
  EXPECT_FALSE(sent.rate_limited);
  EXPECT_FALSE(sent.lease_short);
  ASSERT_EQ(calls_.size(), 2u);
  EXPECT_THAT(calls_[0], ElementsAre("evt-1", "evt-3"));
  EXPECT_THAT(calls_[1], ElementsAre("evt-2"));
  EXPECT_THAT(marked_before_wave, ElementsAre(0u, 2u));
  EXPECT_EQ(s.round.attempted, 3u);
}

TEST_F(RoomSenderTest, AStopBeforeTheFirstWaveReleasesEveryRow) {
  SendUnderTest s(options_, store_, publisher_, clock_, stop_, metrics_, *logger_,
                  MakeClaim({Row(1, "room-a"), Row(2, "room-b")}));
  stop_.RequestStop();
  const SendOutcome sent = s.sender.Send(s.round);  // StrictMock: no PublishMany
  EXPECT_EQ(sent.waves, 0u);
  EXPECT_THAT(s.round.queues.released(), UnorderedElementsAre(1, 2));
  EXPECT_EQ(s.round.attempted, 0u);
}

TEST_F(RoomSenderTest, ALeaseTooShortForAWaveReleasesEveryRowAndSaysSo) {
  SendUnderTest s(options_, store_, publisher_, clock_, stop_, metrics_, *logger_,
                  MakeClaim({Row(1, "room-a")}));
  clock_.Advance(options_.lease - options_.publish_timeout);  // less than a wave and the margin
  const SendOutcome sent = s.sender.Send(s.round);
  EXPECT_EQ(sent.waves, 0u);
  EXPECT_TRUE(sent.lease_short);
  EXPECT_THAT(s.round.queues.released(), ElementsAre(1));
}

TEST_F(RoomSenderTest, AGlobalRateLimitGivesBackTheRestOfTheBatch) {
  options_.max_in_flight = 1;
  outcomes_["evt-1"] = {FailedWith(core::PublishStatus::kRateLimited, "im error 80003")};
  ScriptPublisher();
  RecordMarks();
  SendUnderTest s(options_, store_, publisher_, clock_, stop_, metrics_, *logger_,
                  MakeClaim({Row(1, "room-a"), Row(2, "room-b")}));
  const SendOutcome sent = s.sender.Send(s.round);
  EXPECT_TRUE(sent.rate_limited);
  EXPECT_EQ(sent.waves, 1u);
  EXPECT_THAT(FailedIds(), ElementsAre(1));
  EXPECT_THAT(s.round.queues.released(), ElementsAre(2));
}

// A global rate limit the publisher's request budget took (it slowed itself) charges its row and
// holds its room back; the other rooms go on in the same round, through the slowed budget.
TEST_F(RoomSenderTest, AGlobalRateLimitTheBudgetTookLetsTheOtherRoomsGoOn) {
  options_.max_in_flight = 1;
  core::PublishOutcome limited =
      FailedWith(core::PublishStatus::kRateLimited, "im error 60007: app rate limit");
  limited.budget_slowed = true;
  outcomes_["evt-1"] = {limited};
  ScriptPublisher();
  RecordMarks();
  SendUnderTest s(options_, store_, publisher_, clock_, stop_, metrics_, *logger_,
                  MakeClaim({Row(1, "room-a"), Row(2, "room-a"), Row(3, "room-b")}));
  const SendOutcome sent = s.sender.Send(s.round);
  EXPECT_FALSE(sent.rate_limited);
  EXPECT_THAT(FailedIds(), ElementsAre(1));
  EXPECT_THAT(published_, ElementsAre(3));
  EXPECT_THAT(s.round.queues.released(), ElementsAre(2)) << "never overtakes its room's head";
}

TEST_F(RoomSenderTest, NeverSentTypesAreSkippedInOrderWithoutASendOrPacing) {
  options_.room_min_interval = milliseconds(50);
  not_sent_ = {"RoomHeatChanged", "RoomRankChanged"};
  metrics_.DeclareSkippedTypes({not_sent_.begin(), not_sent_.end()});
  EXPECT_CALL(store_, ClaimDue(_))
      .WillOnce(
          Return(MakeClaim({Row(1, "room-a"), Row(2, "room-a", "RoomHeatChanged"),
                            Row(3, "room-a", "RoomRankChanged"), Row(4, "room-a", "RoomUserJoined"),
                            Row(5, "room-b", "RoomHeatChanged")})));
  ScriptPublisher();
  RecordMarks();
  auto worker = MakeWorker();
  RoundResult r = worker.RunRound();
  EXPECT_THAT(calls_, ElementsAre(ElementsAre("evt-1"), ElementsAre("evt-4")));
  // Skipped rows are marked published (never sent, never deleted) but counted apart: only the
  // two rows IM accepted are publish successes.
  EXPECT_THAT(published_, UnorderedElementsAre(1, 2, 3, 4, 5));
  EXPECT_EQ(r.marks.published, 2u);
  EXPECT_EQ(r.marks.skipped, 3u);
  EXPECT_EQ(metrics_.publish_success(), 2u);
  EXPECT_EQ(metrics_.skipped("RoomHeatChanged"), 2u);
  EXPECT_EQ(metrics_.skipped("RoomRankChanged"), 1u);
  EXPECT_THAT(metrics_.RenderPrometheus(),
              HasSubstr("room_outbox_skipped_total{event_type=\"RoomHeatChanged\"} 2\n"));
  auto lines_with = [this](const std::string& text) {
    size_t n = 0;
    for (size_t at = log_.str().find(text); at != std::string::npos;
         at = log_.str().find(text, at + 1)) {
      ++n;
    }
    return n;
  };
  EXPECT_EQ(lines_with("outbox event published"), 2u) << log_.str();
  EXPECT_EQ(lines_with("outbox event skipped"), 3u) << log_.str();
  // One room_min_interval wait, between the two rows of room-a that are sent; none for the rows
  // between.
  EXPECT_THAT(clock_.sleeps(), ElementsAre(milliseconds(50)));
}

TEST_F(RoomSenderTest, NeverSentRowsBehindAFailedHeadAreHeldToo) {
  not_sent_ = {"RoomHeatChanged"};
  EXPECT_CALL(store_, ClaimDue(_))
      .WillOnce(Return(MakeClaim({Row(1, "room-a"), Row(2, "room-a", "RoomHeatChanged")})));
  outcomes_["evt-1"] = {FailedWith(core::PublishStatus::kRetryable, "HTTP 502")};
  ScriptPublisher();
  RecordMarks();
  auto worker = MakeWorker();
  worker.RunRound();
  EXPECT_THAT(FailedIds(), ElementsAre(1));
  EXPECT_THAT(released_, ElementsAre(2));
  EXPECT_TRUE(published_.empty());
}

TEST_F(RoomSenderTest, StopBetweenWavesReleasesTheRestAndMarksWhatFinished) {
  EXPECT_CALL(store_, ClaimDue(_))
      .WillOnce(Return(MakeClaim({Row(1, "room-a"), Row(2, "room-a"), Row(3, "room-a")})));
  ScriptPublisher();
  RecordMarks();
  during_publish_ = [this] { stop_.RequestStop(); };
  auto worker = MakeWorker();
  worker.RunRound();
  EXPECT_EQ(calls_.size(), 1u);
  EXPECT_THAT(published_, ElementsAre(1));
  EXPECT_THAT(released_, ElementsAre(2, 3));
}

TEST_F(RoomSenderTest, PerRoomWavesNeverHoldTwoRowsOfOneRoom) {
  EXPECT_CALL(store_, ClaimDue(_))
      .WillOnce(Return(MakeClaim({Row(1, "room-a"), Row(2, "room-a"), Row(3, "room-b"),
                                  Row(4, "room-a"), Row(5, "room-b")})));
  ScriptPublisher();
  RecordMarks();
  auto worker = MakeWorker();
  RoundResult r = worker.RunRound();
  EXPECT_THAT(calls_, ElementsAre(ElementsAre("evt-1", "evt-3"), ElementsAre("evt-2", "evt-5"),
                                  ElementsAre("evt-4")));
  EXPECT_EQ(r.sent.waves, 3u);
  EXPECT_THAT(published_, ElementsAre(1, 3, 2, 5, 4));
}

TEST_F(RoomSenderTest, FailedHeadRowReleasesLaterRowsOfItsRoomOnly) {
  EXPECT_CALL(store_, Stats())
      .WillOnce(Return(relay::OutboxStats{3, 0, 1}))
      .WillRepeatedly(Return(relay::OutboxStats{0, 0, 0}));
  EXPECT_CALL(store_, ClaimDue(_))
      .WillOnce(Return(MakeClaim({Row(1, "room-a"), Row(2, "room-a"), Row(3, "room-b"),
                                  Row(4, "room-a"), Row(5, "room-b")})));
  outcomes_["evt-1"] = {FailedWith(core::PublishStatus::kRetryable, "http 502")};
  ScriptPublisher();
  RecordMarks();
  auto worker = MakeWorker();
  RoundResult r = worker.RunRound();
  EXPECT_THAT(FailedIds(), ElementsAre(1));
  EXPECT_THAT(released_, ElementsAre(2, 4));
  EXPECT_THAT(published_, ElementsAre(3, 5));
  EXPECT_EQ(r.marks.released, 2u);
  EXPECT_EQ(metrics_.rooms_held_back(), 1);
  EXPECT_THAT(log_.str(), HasSubstr("room held back by a failing head row"));
  EXPECT_THAT(log_.str(), HasSubstr("room_id=room-a event_id=evt-1 held_rows=2"));

  // The room counts as held back while the database says its head has failed.
  EXPECT_CALL(store_, ClaimDue(_))
      .WillOnce(Return(MakeClaim({Row(1, "room-a", "RoomGiftSent", 1), Row(2, "room-a")})));
  clock_.Advance(milliseconds(1000));  // the next Stats read (stats_interval)
  worker.RunRound();
  EXPECT_EQ(metrics_.rooms_held_back(), 0);
}

TEST_F(RoomSenderTest, OrderingNoneSendsEveryRowInOnePublishMany) {
  options_.ordering = Ordering::kNone;
  relay::ClaimOptions seen;
  EXPECT_CALL(store_, ClaimDue(_)).WillOnce(Invoke([&](const relay::ClaimOptions& o) {
    seen = o;
    return core::Result<relay::Claim>(
        MakeClaim({Row(1, "room-a"), Row(2, "room-a"), Row(3, "room-b"), Row(4, "room-a")}));
  }));
  outcomes_["evt-1"] = {FailedWith(core::PublishStatus::kRetryable, "http 502")};
  ScriptPublisher();
  RecordMarks();
  auto worker = MakeWorker();
  worker.RunRound();
  EXPECT_FALSE(seen.rooms.per_room_order);
  EXPECT_THAT(calls_, ElementsAre(ElementsAre("evt-1", "evt-2", "evt-3", "evt-4")));
  EXPECT_THAT(published_, ElementsAre(2, 3, 4));
  EXPECT_TRUE(released_.empty());
}

TEST_F(RoomSenderTest, LeaseTooShortForAnotherWaveReleasesTheRest) {
  // Lease 5s, publish_timeout 3s, margin 1s: after a wave that took 3s, 2s are left, not enough.
  options_.lease = milliseconds(5000);
  EXPECT_CALL(store_, ClaimDue(_))
      .WillOnce(Return(MakeClaim({Row(1, "room-a"), Row(2, "room-a"), Row(3, "room-b")})));
  ScriptPublisher();
  RecordMarks();
  during_publish_ = [this] { clock_.Advance(milliseconds(3000)); };
  auto worker = MakeWorker();
  worker.RunRound();
  EXPECT_THAT(calls_, ElementsAre(ElementsAre("evt-1", "evt-3")));
  EXPECT_THAT(published_, ElementsAre(1, 3));
  EXPECT_THAT(released_, ElementsAre(2));
}

TEST_F(RoomSenderTest, AWaveHoldsAtMostMaxInFlightRowsAndIsMarkedBeforeTheNext) {
  options_.ordering = Ordering::kNone;
  options_.max_in_flight = 2;
  EXPECT_CALL(store_, ClaimDue(_))
      .WillOnce(Return(MakeClaim({Row(1, "room-a"), Row(2, "room-b"), Row(3, "room-c"),
                                  Row(4, "room-d"), Row(5, "room-e")})));
  ScriptPublisher();
  RecordMarks();
  // What was marked when each wave started: with a publisher that sends in waves, each wave is
  // marked before the next (nothing is in flight between two waves).
  std::vector<size_t> marked_at_wave_start;
  during_publish_ = [&] { marked_at_wave_start.push_back(published_.size()); };
  auto worker = MakeWorker();
  worker.RunRound();
  EXPECT_THAT(calls_, ElementsAre(ElementsAre("evt-1", "evt-2"), ElementsAre("evt-3", "evt-4"),
                                  ElementsAre("evt-5")));
  EXPECT_THAT(marked_at_wave_start, ElementsAre(0u, 2u, 4u));
  EXPECT_THAT(published_, ElementsAre(1, 2, 3, 4, 5));
}

TEST_F(RoomSenderTest, RowsTheLeaseNoLongerCoversAreReleased) {
  // Lease 5s, margin 1s, publish_timeout 3s: the first wave fits; after it took 3s, 1s is left
  // and the next wave would not be marked in time.
  options_.ordering = Ordering::kNone;
  options_.max_in_flight = 2;
  options_.lease = milliseconds(5000);
  EXPECT_CALL(store_, ClaimDue(_))
      .WillOnce(Return(
          MakeClaim({Row(1, "room-a"), Row(2, "room-b"), Row(3, "room-c"), Row(4, "room-d")})));
  ScriptPublisher();
  RecordMarks();
  during_publish_ = [this] { clock_.Advance(milliseconds(3000)); };
  auto worker = MakeWorker();
  RoundResult r = worker.RunRound();
  EXPECT_THAT(calls_, ElementsAre(ElementsAre("evt-1", "evt-2")));
  EXPECT_THAT(published_, ElementsAre(1, 2));
  EXPECT_THAT(released_, ElementsAre(3, 4));
  EXPECT_EQ(r.marks.released, 2u);
}

TEST_F(RoomSenderTest, RoomPacingSleepsBetweenSendsToOneRoom) {
  options_.room_min_interval = milliseconds(50);
  EXPECT_CALL(store_, ClaimDue(_))
      .WillOnce(Return(MakeClaim({Row(1, "room-a"), Row(2, "room-a"), Row(3, "room-b")})));
  ScriptPublisher();
  RecordMarks();
  during_publish_ = [this] { clock_.Advance(milliseconds(20)); };
  auto worker = MakeWorker();
  worker.RunRound();
  EXPECT_THAT(calls_, ElementsAre(ElementsAre("evt-1", "evt-3"), ElementsAre("evt-2")));
  // The first wave took 20ms; room-a's next send waits the remaining 30ms.
  EXPECT_THAT(clock_.sleeps(), ElementsAre(milliseconds(30)));
}

TEST_F(RoomSenderTest, RateLimitedRowRetriesLaterAndTheRoundStopsSending) {
  options_.poll_interval = milliseconds(200);
  EXPECT_CALL(store_, ClaimDue(_))
      .WillOnce(Return(MakeClaim({Row(1, "room-a"), Row(2, "room-b"), Row(3, "room-b")})));
  outcomes_["evt-2"] = {
      FailedWith(core::PublishStatus::kRateLimited, "im error 10023: frequency limit")};
  ScriptPublisher();
  RecordMarks();
  auto worker = MakeWorker();
  RoundResult r = worker.RunRound();
  EXPECT_TRUE(r.sent.rate_limited);
  ASSERT_EQ(failed_.size(), 1u);
  EXPECT_EQ(failed_[0].id, 2);
  EXPECT_EQ(failed_[0].retry_after_ms, 1000);
  EXPECT_THAT(published_, ElementsAre(1));
  EXPECT_THAT(released_, ElementsAre(3));
}

TEST_F(RoomSenderTest, PublisherReturningTooFewOutcomesFailsTheMissingRows) {
  EXPECT_CALL(store_, ClaimDue(_))
      .WillOnce(Return(MakeClaim({Row(1, "room-a"), Row(2, "room-b")})));
  EXPECT_CALL(publisher_, PublishMany(_, _, _))
      .WillOnce(Return(std::vector<core::PublishOutcome>{Published()}));
  RecordMarks();
  auto worker = MakeWorker();
  worker.RunRound();
  EXPECT_THAT(published_, ElementsAre(1));
  EXPECT_THAT(FailedIds(), ElementsAre(2));
}

TEST_F(RoomSenderTest, AWallClockStepChangesNeitherPacingNorTheLeaseLeft) {
  options_.room_min_interval = milliseconds(50);
  options_.lease = milliseconds(5000);
  EXPECT_CALL(store_, ClaimDue(_))
      .WillOnce(Return(MakeClaim({Row(1, "room-a"), Row(2, "room-a"), Row(3, "room-a")})));
  ScriptPublisher();
  RecordMarks();
  int wave = 0;
  during_publish_ = [&] {
    // One step forward by 10 minutes, then one back by an hour; 20ms of real time per wave.
    clock_.StepWall(wave++ == 0 ? milliseconds(600'000) : milliseconds(-3'600'000));
    clock_.Advance(milliseconds(20));
  };
  auto worker = MakeWorker();
  worker.RunRound();
  EXPECT_THAT(calls_,
              ElementsAre(ElementsAre("evt-1"), ElementsAre("evt-2"), ElementsAre("evt-3")));
  EXPECT_THAT(published_, ElementsAre(1, 2, 3));
  EXPECT_TRUE(released_.empty());
  EXPECT_THAT(clock_.sleeps(), ElementsAre(milliseconds(30), milliseconds(30)));
}

core::PublishOutcome RoomRefused() {
  core::PublishOutcome out =
      FailedWith(core::PublishStatus::kRateLimited, "MsgDropReason: MsgFreqCtrl");
  out.scope = core::FailureScope::kRoom;
  out.http_status = 200;
  out.definite_drop = true;
  return out;
}

TEST_F(RoomSenderTest, ARoomRefusalHoldsBackThatRoomOnlyAndTheBatchGoesOn) {
  relay::OutboxRow hot = Row(1, "room-hot");
  hot.drop_count = 2;
  EXPECT_CALL(store_, ClaimDue(_))
      .WillOnce(Return(MakeClaim({hot, Row(2, "room-hot"), Row(3, "room-a"), Row(4, "room-b"),
                                  Row(5, "room-a"), Row(6, "room-c"), Row(7, "room-d")})));
  outcomes_["evt-1"] = {RoomRefused()};
  ScriptPublisher();
  RecordMarks();
  auto worker = MakeWorker();
  RoundResult r = worker.RunRound();

  // The hot room's head is charged, due after max(poll_interval, 1s), its drop noted; its next
  // row waits; every other room is sent in the same round.
  ASSERT_EQ(failed_.size(), 1u);
  EXPECT_EQ(failed_[0].id, 1);
  EXPECT_EQ(failed_[0].retry_after_ms, 1000);
  EXPECT_TRUE(failed_[0].dropped);
  EXPECT_THAT(released_, ElementsAre(2));
  EXPECT_THAT(published_, UnorderedElementsAre(3, 4, 5, 6, 7));
  EXPECT_FALSE(r.sent.rate_limited);
  // The refusal is counted as the room's, and each accepted message with the one event it held.
  EXPECT_EQ(metrics_.room_refusals(), 1u);
  EXPECT_EQ(metrics_.messages_delivered(), 5u);
  EXPECT_EQ(metrics_.message_events(), 5u);
}

TEST_F(RoomSenderTest, TheDropCountIsTheDropGenerationOfTheSend) {
  relay::OutboxRow row = Row(1, "room-a");
  row.drop_count = 3;
  EXPECT_CALL(store_, ClaimDue(_)).WillOnce(Return(MakeClaim({row})));
  EXPECT_CALL(publisher_, PublishMany(_, _, _))
      .WillOnce(Invoke([](std::span<const core::PublishMessage> messages, milliseconds, size_t) {
        EXPECT_EQ(messages[0].row_id, 1);
        EXPECT_EQ(messages[0].drop_generation, 3u);
        return std::vector<core::PublishOutcome>{Published()};
      }));
  RecordMarks();
  auto worker = MakeWorker();
  worker.RunRound();
  EXPECT_THAT(published_, ElementsAre(1));
}

TEST_F(RoomSenderTest, RowsTheOpenBreakerKeepsBackAreReleasedUnchargedAndTheRoundStops) {
  options_.max_in_flight = 2;
  EXPECT_CALL(store_, ClaimDue(_))
      .WillOnce(Return(MakeClaim({Row(1, "room-a"), Row(2, "room-b"), Row(3, "room-c"),
                                  Row(4, "room-d"), Row(5, "room-a")})));
  core::PublishOutcome tripped =
      FailedWith(core::PublishStatus::kPermanent, "im error 70003: bad sig");
  tripped.scope = core::FailureScope::kApp;
  tripped.im_error_code = 70003;
  tripped.breaker = core::BreakerTransition::kOpened;
  outcomes_["evt-1"] = {tripped};
  outcomes_["evt-2"] = {
      FailedWith(core::PublishStatus::kNotAttempted, "not attempted: breaker open")};
  during_publish_ = [this] { breaker_open_ = true; };
  ScriptPublisher();
  RecordMarks();
  auto worker = MakeWorker();
  RoundResult r = worker.RunRound();

  // Only the tripping attempt is charged; the row kept back and everything after it go back
  // with retry_count unchanged, and nothing more is sent this round.
  EXPECT_THAT(FailedIds(), ElementsAre(1));
  EXPECT_THAT(released_, UnorderedElementsAre(2, 3, 4, 5));
  EXPECT_EQ(calls_.size(), 1u);
  EXPECT_TRUE(r.breaker_open);
  EXPECT_EQ(metrics_.im_breaker_open(), true);
  EXPECT_THAT(log_.str(), HasSubstr("IM circuit breaker open"));
  EXPECT_THAT(log_.str(), HasSubstr("im_error_code=70003"));
}

}  // namespace
}  // namespace room_outbox::relay
