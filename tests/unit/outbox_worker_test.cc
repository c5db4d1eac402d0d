#include "worker/outbox_worker.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/envelope_codec.h"
#include "worker_fixture.h"

namespace room_outbox::relay {
namespace {

using ::room_outbox::testing::FailedWith;
using ::room_outbox::testing::Published;
using ::room_outbox::testing::Skipped;
using std::chrono::milliseconds;
using ::testing::_;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::HasSubstr;
using ::testing::Invoke;
using ::testing::Return;
using ::testing::StartsWith;
using ::testing::UnorderedElementsAre;

// The worker's collaborators, options and recorded marks: tests/mocks/worker_fixture.h.
class OutboxWorkerTest : public ::room_outbox::testing::WorkerFixture {};

TEST_F(OutboxWorkerTest, SuccessMarksThatRowPublished) {
  relay::ClaimOptions seen;
  EXPECT_CALL(store_, ClaimDue(_)).WillOnce(Invoke([&](const relay::ClaimOptions& o) {
    seen = o;
    return core::Result<relay::Claim>(MakeClaim({Row(7, "room-a")}));
  }));
  ScriptPublisher();
  RecordMarks();
  auto worker = MakeWorker();
  RoundResult r = worker.RunRound();

  EXPECT_EQ(seen.limit, 100u);
  EXPECT_EQ(seen.lease_ms, 30000);
  EXPECT_TRUE(seen.per_room_order);
  ASSERT_EQ(calls_.size(), 1u);
  EXPECT_THAT(calls_[0], ElementsAre("evt-7"));
  EXPECT_THAT(published_, ElementsAre(7));
  EXPECT_TRUE(failed_.empty());
  EXPECT_EQ(r.marks.published, 1u);
  EXPECT_FALSE(r.error);
  EXPECT_EQ(metrics_.publish_success(), 1u);
}

TEST_F(OutboxWorkerTest, FailureIsMarkedFailedWithErrorAndDueAfterPollInterval) {
  EXPECT_CALL(store_, ClaimDue(_))
      .WillOnce(Return(MakeClaim({Row(1, "room-a", "RoomGiftSent", 2)})));
  outcomes_["evt-1"] = {FailedWith(core::PublishStatus::kRetryable, "im error 70001: internal")};
  ScriptPublisher();
  RecordMarks();
  auto worker = MakeWorker();
  RoundResult r = worker.RunRound();

  ASSERT_EQ(failed_.size(), 1u);
  EXPECT_EQ(failed_[0].id, 1);
  EXPECT_EQ(failed_[0].error, "retryable: im error 70001: internal");
  EXPECT_EQ(failed_[0].retry_after_ms, 1000);
  EXPECT_TRUE(published_.empty());
  EXPECT_EQ(calls_.size(), 1u) << "a failed row is never retried in the same round";
  EXPECT_EQ(r.marks.failed, 1u);
  EXPECT_FALSE(r.error) << "a publish failure is not an error of the round";
  EXPECT_EQ(metrics_.publish_failure(), 1u);
  // The outcome line carries the count the store now holds.
  EXPECT_THAT(log_.str(), HasSubstr("retry_count=3 status=pending"));
}

TEST_F(OutboxWorkerTest, FailureThenSuccessOnTheNextRound) {
  EXPECT_CALL(store_, ClaimDue(_))
      .WillOnce(Return(MakeClaim({Row(1, "room-a")})))
      .WillOnce(Return(MakeClaim({Row(1, "room-a", "RoomGiftSent", 1)})));
  outcomes_["evt-1"] = {FailedWith(core::PublishStatus::kUnknown, "timeout after 3000ms")};
  ScriptPublisher();
  RecordMarks();
  auto worker = MakeWorker();
  worker.RunRound();
  EXPECT_THAT(FailedIds(), ElementsAre(1));
  EXPECT_TRUE(published_.empty());
  clock_.Advance(milliseconds(1000));
  worker.RunRound();
  EXPECT_THAT(published_, ElementsAre(1));
  EXPECT_EQ(calls_.size(), 2u);
}

TEST_F(OutboxWorkerTest, OneFailureDoesNotStopTheBatch) {
  EXPECT_CALL(store_, ClaimDue(_))
      .WillOnce(Return(MakeClaim({Row(1, "room-a"), Row(2, "room-b"), Row(3, "room-c")})));
  outcomes_["evt-2"] = {
      FailedWith(core::PublishStatus::kPermanent, "im error 10010: group not found")};
  ScriptPublisher();
  RecordMarks();
  auto worker = MakeWorker();
  RoundResult r = worker.RunRound();
  EXPECT_THAT(published_, ElementsAre(1, 3));
  EXPECT_THAT(FailedIds(), ElementsAre(2));
  EXPECT_EQ(r.marks.published, 2u);
  EXPECT_EQ(r.marks.failed, 1u);
  EXPECT_EQ(mark_published_calls_, 1) << "one batch mark per round";
}

TEST_F(OutboxWorkerTest, UndecodableEnvelopeIsKeptWithItsErrorAndTheRestContinue) {
  relay::OutboxRow bad = Row(1, "room-a");
  bad.envelope = "{not json";
  EXPECT_CALL(store_, ClaimDue(_)).WillOnce(Return(MakeClaim({bad, Row(2, "room-b")})));
  ScriptPublisher();
  RecordMarks();
  auto worker = MakeWorker();
  RoundResult r = worker.RunRound();

  ASSERT_EQ(failed_.size(), 1u);
  EXPECT_EQ(failed_[0].id, 1);
  EXPECT_THAT(failed_[0].error, StartsWith("undecodable envelope: "));
  EXPECT_EQ(failed_[0].retry_after_ms, 1000);
  EXPECT_THAT(published_, ElementsAre(2));
  ASSERT_EQ(calls_.size(), 1u);
  EXPECT_THAT(calls_[0], ElementsAre("evt-2"));
  ASSERT_TRUE(r.error);
  EXPECT_FALSE(r.store_error);
  EXPECT_EQ(r.marks.undecodable, 1u);
}

TEST_F(OutboxWorkerTest, HostileEnvelopesAreKeptWithAShortErrorAndTheRestContinue) {
  // Poison rows as another process (or a hand edit) could leave them: nesting deep enough to
  // overflow a recursive parser's stack, a huge row, invalid UTF-8, NUL bytes.
  std::vector<relay::OutboxRow> rows;
  for (const std::string& envelope :
       {std::string(30'000, '[') + std::string(30'000, ']'),
        R"({"payload":{"x":")" + std::string(4 << 20, 'a') + R"("}})",
        std::string("{\"event_id\":\"\xff\xfe\"}"), std::string("{\0\0\0}", 5)}) {
    const auto n = static_cast<int64_t>(rows.size());
    rows.push_back(Row(n + 1, "room-" + std::to_string(n)));
    rows.back().envelope = envelope;
  }
  rows.push_back(Row(5, "room-e"));
  EXPECT_CALL(store_, ClaimDue(_)).WillOnce(Return(MakeClaim(rows)));
  ScriptPublisher();
  RecordMarks();
  auto worker = MakeWorker();
  RoundResult r = worker.RunRound();

  ASSERT_EQ(failed_.size(), 4u);
  for (const auto& f : failed_) {
    EXPECT_THAT(f.error, StartsWith("undecodable envelope: "));
    EXPECT_LE(f.error.size(), 260u) << "last_error stays short";
  }
  EXPECT_THAT(failed_[0].error, HasSubstr("nested deeper than 64 levels"));
  EXPECT_THAT(failed_[1].error, HasSubstr("more than the limit of 65536"));
  EXPECT_THAT(published_, ElementsAre(5));
  EXPECT_EQ(r.marks.undecodable, 4u);
}

TEST_F(OutboxWorkerTest, UndecodableHeadRowHoldsBackItsRoom) {
  relay::OutboxRow bad = Row(1, "room-a");
  bad.envelope = "[]";
  EXPECT_CALL(store_, ClaimDue(_))
      .WillOnce(Return(MakeClaim({bad, Row(2, "room-a"), Row(3, "room-b")})));
  ScriptPublisher();
  RecordMarks();
  auto worker = MakeWorker();
  worker.RunRound();
  EXPECT_THAT(FailedIds(), ElementsAre(1));
  EXPECT_THAT(released_, ElementsAre(2));
  EXPECT_THAT(published_, ElementsAre(3));
  // The gauge is what the database holds (OutboxStats::rooms_held_back), not what the round saw.
  EXPECT_EQ(metrics_.rooms_held_back(), 0);
}

TEST_F(OutboxWorkerTest, SkippedTypeIsMarkedPublished) {
  EXPECT_CALL(store_, ClaimDue(_)).WillOnce(Return(MakeClaim({Row(1, "room-a", "RoomCreated")})));
  outcomes_["evt-1"] = {Skipped()};
  ScriptPublisher();
  RecordMarks();
  auto worker = MakeWorker();
  RoundResult r = worker.RunRound();
  EXPECT_THAT(published_, ElementsAre(1));
  EXPECT_EQ(r.marks.published, 1u);
  EXPECT_TRUE(failed_.empty());
}

TEST_F(OutboxWorkerTest, NeverSentTypesAreDeliveredInOrderWithoutASendOrPacing) {
  options_.room_min_interval = milliseconds(50);
  not_sent_ = {"RoomHeatChanged", "RoomRankChanged"};
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
  EXPECT_THAT(published_, UnorderedElementsAre(1, 2, 3, 4, 5));
  EXPECT_EQ(r.marks.published, 5u);
  // One room_min_interval wait, between the two rows of room-a that are sent; none for the rows
  // between.
  EXPECT_THAT(clock_.sleeps(), ElementsAre(milliseconds(50)));
}

TEST_F(OutboxWorkerTest, NeverSentRowsBehindAFailedHeadAreHeldToo) {
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

TEST_F(OutboxWorkerTest, ClaimErrorIsARoundErrorAndTheLoopRetriesAfterPollInterval) {
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

TEST_F(OutboxWorkerTest, RepeatedDatabaseErrorsBackOffUpToTheCap) {
  options_.max_error_backoff = milliseconds(4000);
  EXPECT_CALL(store_, ClaimDue(_))
      .WillRepeatedly(Return(core::Fail(ErrorCode::kUnavailable, "server gone")));
  clock_.on_sleep = [this] {
    if (clock_.sleeps().size() == 5) stop_.RequestStop();
  };
  auto worker = MakeWorker();
  worker.Run();
  EXPECT_THAT(clock_.sleeps(),
              ElementsAre(milliseconds(1000), milliseconds(2000), milliseconds(4000),
                          milliseconds(4000), milliseconds(4000)));
}

TEST_F(OutboxWorkerTest, MarkPublishedErrorIsARoundError) {
  EXPECT_CALL(store_, ClaimDue(_)).WillOnce(Return(MakeClaim({Row(1, "room-a")})));
  ScriptPublisher();
  EXPECT_CALL(store_, MarkPublished(kToken, _))
      .WillOnce(
          Return(core::Fail(ErrorCode::kUnavailable, "mysql_stmt_execute(mark_published): gone")));
  auto worker = MakeWorker();
  RoundResult r = worker.RunRound();
  ASSERT_TRUE(r.error);
  EXPECT_TRUE(r.store_error);
  EXPECT_THAT(r.error->message, HasSubstr("mark_published"));
}

TEST_F(OutboxWorkerTest, MarkFailedErrorIsARoundError) {
  EXPECT_CALL(store_, ClaimDue(_)).WillOnce(Return(MakeClaim({Row(1, "room-a")})));
  outcomes_["evt-1"] = {FailedWith(core::PublishStatus::kRetryable, "http 503")};
  ScriptPublisher();
  EXPECT_CALL(store_, MarkFailed(kToken, _))
      .WillOnce(Return(core::Fail(ErrorCode::kUnavailable, "lost connection")));
  auto worker = MakeWorker();
  RoundResult r = worker.RunRound();
  ASSERT_TRUE(r.error);
  EXPECT_TRUE(r.store_error);
}

TEST_F(OutboxWorkerTest, StopRequestedMeansNoNewClaim) {
  stop_.RequestStop();
  auto worker = MakeWorker();
  RoundResult r = worker.RunRound();  // StrictMock: any ClaimDue call fails the test
  EXPECT_EQ(r.claim.claimed, 0u);
  worker.Run();
  DrainResult d = worker.Drain();
  EXPECT_TRUE(d.stopped);
  EXPECT_TRUE(clock_.sleeps().empty());
}

TEST_F(OutboxWorkerTest, StopBetweenWavesReleasesTheRestAndMarksWhatFinished) {
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

TEST_F(OutboxWorkerTest, FullBatchStartsTheNextRoundAtOnceAndEmptyWaitsPollInterval) {
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

TEST_F(OutboxWorkerTest, ShortClaimWithMoreDueStartsTheNextRoundButAnEmptyOneWaits) {
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

TEST_F(OutboxWorkerTest, EmptyClaimSleepsPollInterval) {
  EXPECT_CALL(store_, ClaimDue(_)).WillRepeatedly(Return(MakeClaim({})));
  clock_.on_sleep = [this] {
    if (clock_.sleeps().size() == 3) stop_.RequestStop();
  };
  auto worker = MakeWorker();
  worker.Run();
  EXPECT_THAT(clock_.sleeps(),
              ElementsAre(milliseconds(1000), milliseconds(1000), milliseconds(1000)));
}

TEST_F(OutboxWorkerTest, PerRoomWavesNeverHoldTwoRowsOfOneRoom) {
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

TEST_F(OutboxWorkerTest, FailedHeadRowReleasesLaterRowsOfItsRoomOnly) {
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

TEST_F(OutboxWorkerTest, ResultsAreMarkedAfterEachWave) {
  EXPECT_CALL(store_, ClaimDue(_))
      .WillOnce(Return(MakeClaim({Row(1, "room-a"), Row(2, "room-a"), Row(3, "room-b")})));
  std::vector<std::string> sequence;
  during_publish_ = [&] { sequence.push_back("publish " + calls_.back().front()); };
  ScriptPublisher();
  EXPECT_CALL(store_, MarkPublished(kToken, _))
      .WillRepeatedly(Invoke([&](const std::string&, std::span<const int64_t> ids) {
        std::string entry = "mark";
        for (int64_t id : ids) entry += " " + std::to_string(id);
        sequence.push_back(entry);
        return core::Result<size_t>(ids.size());
      }));
  auto worker = MakeWorker();
  RoundResult r = worker.RunRound();
  // A crash after the first wave leaves nothing of it unmarked.
  EXPECT_THAT(sequence, ElementsAre("publish evt-1", "mark 1 3", "publish evt-2", "mark 2"));
  EXPECT_EQ(r.marks.published, 3u);
}

TEST_F(OutboxWorkerTest, MarkErrorMidRoundStopsSendingAndReleasesTheRest) {
  EXPECT_CALL(store_, ClaimDue(_))
      .WillOnce(Return(MakeClaim({Row(1, "room-a"), Row(2, "room-a"), Row(3, "room-a")})));
  ScriptPublisher();
  EXPECT_CALL(store_, MarkPublished(kToken, _))
      .WillOnce(Return(core::Fail(ErrorCode::kUnavailable, "server gone")));
  std::vector<int64_t> released;
  EXPECT_CALL(store_, Release(kToken, _))
      .WillOnce(Invoke([&](const std::string&, std::span<const int64_t> ids) {
        released.assign(ids.begin(), ids.end());
        return core::Result<size_t>(core::Fail(ErrorCode::kUnavailable, "server gone"));
      }));
  auto worker = MakeWorker();
  RoundResult r = worker.RunRound();
  EXPECT_EQ(calls_.size(), 1u);
  EXPECT_THAT(released, ElementsAre(2, 3));
  ASSERT_TRUE(r.error);
  EXPECT_TRUE(r.store_error);
  EXPECT_EQ(r.marks.published, 0u) << "nothing was recorded as published";
}

TEST_F(OutboxWorkerTest, OrderingNoneSendsEveryRowInOnePublishMany) {
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
  EXPECT_FALSE(seen.per_room_order);
  EXPECT_THAT(calls_, ElementsAre(ElementsAre("evt-1", "evt-2", "evt-3", "evt-4")));
  EXPECT_THAT(published_, ElementsAre(2, 3, 4));
  EXPECT_TRUE(released_.empty());
}

TEST_F(OutboxWorkerTest, LeaseTooShortForAnotherWaveReleasesTheRest) {
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

TEST_F(OutboxWorkerTest, AWaveHoldsAtMostMaxInFlightRowsAndIsMarkedBeforeTheNext) {
  options_.ordering = Ordering::kNone;
  options_.max_in_flight = 2;
  EXPECT_CALL(store_, ClaimDue(_))
      .WillOnce(Return(MakeClaim({Row(1, "room-a"), Row(2, "room-b"), Row(3, "room-c"),
                                  Row(4, "room-d"), Row(5, "room-e")})));
  ScriptPublisher();
  RecordMarks();
  // What was marked when each wave started: a kill -9 loses at most one wave's marks.
  std::vector<size_t> marked_at_wave_start;
  during_publish_ = [&] { marked_at_wave_start.push_back(published_.size()); };
  auto worker = MakeWorker();
  worker.RunRound();
  EXPECT_THAT(calls_, ElementsAre(ElementsAre("evt-1", "evt-2"), ElementsAre("evt-3", "evt-4"),
                                  ElementsAre("evt-5")));
  EXPECT_THAT(marked_at_wave_start, ElementsAre(0u, 2u, 4u));
  EXPECT_THAT(published_, ElementsAre(1, 2, 3, 4, 5));
}

TEST_F(OutboxWorkerTest, RowsTheLeaseNoLongerCoversAreReleased) {
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

TEST_F(OutboxWorkerTest, RoomPacingSleepsBetweenSendsToOneRoom) {
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

TEST_F(OutboxWorkerTest, PacedRoundsCutRoomsAtAPollIntervalOfSendsButDrainDoesNot) {
  options_.room_min_interval = milliseconds(50);
  options_.skip_event_types = {"RoomHeatChanged"};
  // A round may send a room poll_interval / room_min_interval rows: 1000 / 50; rows of types
  // that are never sent do not count.
  EXPECT_CALL(store_, ClaimDue(AllOf(Field(&relay::ClaimOptions::run_cut_rows, 20u),
                                     Field(&relay::ClaimOptions::room_min_interval_ms, 50),
                                     Field(&relay::ClaimOptions::skip_event_types,
                                           ElementsAre("RoomHeatChanged")))))
      .WillOnce(Return(MakeClaim({})));
  auto worker = MakeWorker();
  worker.RunRound();
  // --once ends when nothing is due, so it must not schedule rows for later: whole runs.
  EXPECT_CALL(store_, ClaimDue(Field(&relay::ClaimOptions::run_cut_rows, 0u)))
      .WillOnce(Return(MakeClaim({})));
  worker.Drain();

  // Without room_min_interval nothing is cut.
  options_.room_min_interval = milliseconds(0);
  EXPECT_CALL(store_, ClaimDue(Field(&relay::ClaimOptions::run_cut_rows, 0u)))
      .WillOnce(Return(MakeClaim({})));
  auto unpaced = MakeWorker();
  unpaced.RunRound();
}

TEST_F(OutboxWorkerTest, WhileAPacedRoomsRowsComeDueTheLoopPollsAtRoomMinInterval) {
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

TEST_F(OutboxWorkerTest, AClaimThatOnlyScheduledPacedRoomsIsFollowedAfterRoomMinInterval) {
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

TEST_F(OutboxWorkerTest, RateLimitedRowRetriesLaterAndTheRoundStopsSending) {
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

TEST_F(OutboxWorkerTest, LongErrorTextIsShortened) {
  EXPECT_CALL(store_, ClaimDue(_)).WillOnce(Return(MakeClaim({Row(1, "room-a")})));
  outcomes_["evt-1"] = {FailedWith(core::PublishStatus::kRetryable, std::string(5000, 'x'))};
  ScriptPublisher();
  RecordMarks();
  auto worker = MakeWorker();
  worker.RunRound();
  ASSERT_EQ(failed_.size(), 1u);
  EXPECT_LE(failed_[0].error.size(), 210u);
}

TEST_F(OutboxWorkerTest, PublisherReturningTooFewOutcomesFailsTheMissingRows) {
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

TEST_F(OutboxWorkerTest, OutcomeLineCarriesTheSeedFields) {
  EXPECT_CALL(store_, ClaimDue(_)).WillOnce(Return(MakeClaim({Row(1, "room-a")})));
  ScriptPublisher();
  RecordMarks();
  auto worker = MakeWorker();
  worker.RunRound();
  EXPECT_THAT(log_.str(),
              HasSubstr("outbox event published worker=room_outbox node_id=node-1 event_id=evt-1 "
                        "event_type=RoomGiftSent room_id=room-a retry_count=0 status=published "
                        "error=\"\""));
}

TEST_F(OutboxWorkerTest, GaugesComeFromStatsAndCountersFromOutcomes) {
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

TEST_F(OutboxWorkerTest, DrainStopsWhenNothingIsDueAndReportsFailures) {
  options_.batch_size = 2;
  EXPECT_CALL(store_, ClaimDue(_))
      .WillOnce(Return(MakeClaim({Row(1, "room-a"), Row(2, "room-b")})))
      .WillOnce(Return(MakeClaim({Row(3, "room-c")})))
      .WillOnce(Return(MakeClaim({})));
  outcomes_["evt-2"] = {FailedWith(core::PublishStatus::kRetryable, "http 500")};
  ScriptPublisher();
  RecordMarks();
  auto worker = MakeWorker();
  DrainResult d = worker.Drain();
  EXPECT_EQ(d.rounds, 3u);
  EXPECT_EQ(d.published, 2u);
  EXPECT_EQ(d.failed, 1u);
  EXPECT_FALSE(d.ok());
  EXPECT_TRUE(clock_.sleeps().empty()) << "--once never waits for a tick";
}

TEST_F(OutboxWorkerTest, DrainTriesEachRowOnceEvenWhenItComesDueAgain) {
  EXPECT_CALL(store_, ClaimDue(_))
      .WillOnce(Return(MakeClaim({Row(1, "room-a"), Row(2, "room-b")})))
      .WillOnce(Return(MakeClaim({Row(1, "room-a", "RoomGiftSent", 1), Row(4, "room-a")})));
  outcomes_["evt-1"] = {FailedWith(core::PublishStatus::kRetryable, "http 500")};
  ScriptPublisher();
  RecordMarks();
  auto worker = MakeWorker();
  DrainResult d = worker.Drain();
  EXPECT_EQ(calls_.size(), 1u);
  // Row 1 came due again: given back, and row 4 waits behind it (same room).
  EXPECT_THAT(released_, ElementsAre(1, 4));
  EXPECT_EQ(d.failed, 1u);
  EXPECT_EQ(d.rounds, 2u);
}

TEST_F(OutboxWorkerTest, DrainReportsADatabaseError) {
  EXPECT_CALL(store_, ClaimDue(_))
      .WillOnce(Return(core::Fail(ErrorCode::kUnavailable, "no server")));
  auto worker = MakeWorker();
  DrainResult d = worker.Drain();
  ASSERT_TRUE(d.store_error);
  EXPECT_EQ(d.store_error->code, ErrorCode::kUnavailable);
  EXPECT_FALSE(d.ok());
}

TEST_F(OutboxWorkerTest, DrainWithEverythingDeliveredIsOk) {
  EXPECT_CALL(store_, ClaimDue(_))
      .WillOnce(Return(MakeClaim({Row(1, "room-a")})))
      .WillOnce(Return(MakeClaim({})));
  ScriptPublisher();
  RecordMarks();
  auto worker = MakeWorker();
  DrainResult d = worker.Drain();
  EXPECT_TRUE(d.ok());
  EXPECT_EQ(d.published, 1u);
}

TEST_F(OutboxWorkerTest, AClaimGivenBackWholeUnsentIsAFailedRoundAndIsNotRetriedAtOnce) {
  // Lease 5s, margin 1s, publish_timeout 3s: a claim that took 2.5s leaves 1.5s for a wave.
  options_.lease = milliseconds(5000);
  options_.batch_size = 3;
  EXPECT_CALL(store_, ClaimDue(_)).WillOnce(Invoke([this](const relay::ClaimOptions&) {
    clock_.Advance(milliseconds(2500));
    return core::Result<relay::Claim>(
        MakeClaim({Row(1, "room-a"), Row(2, "room-b"), Row(3, "room-c")}));
  }));
  RecordMarks();  // StrictMock publisher: no PublishMany expected
  clock_.on_sleep = [this] { stop_.RequestStop(); };
  auto worker = MakeWorker();
  worker.Run();
  EXPECT_THAT(released_, ElementsAre(1, 2, 3));
  EXPECT_THAT(metrics_.RenderPrometheus(), HasSubstr("room_outbox_round_errors_total 1\n"));
  EXPECT_THAT(log_.str(), HasSubstr("claim given back whole without an attempt: a failed round"));
  EXPECT_THAT(log_.str(), HasSubstr("lease_left_ms=2500"));
  // A full claim, yet the loop waits poll_interval instead of claiming again at once.
  EXPECT_THAT(clock_.sleeps(), ElementsAre(milliseconds(1000)));
}

TEST_F(OutboxWorkerTest, AClaimGivenBackWholeReportsAnErrorButNoStoreError) {
  options_.lease = milliseconds(5000);
  EXPECT_CALL(store_, ClaimDue(_)).WillOnce(Invoke([this](const relay::ClaimOptions&) {
    clock_.Advance(milliseconds(2500));
    return core::Result<relay::Claim>(MakeClaim({Row(1, "room-a")}));
  }));
  RecordMarks();
  auto worker = MakeWorker();
  RoundResult r = worker.RunRound();
  EXPECT_TRUE(r.released_unsent);
  ASSERT_TRUE(r.error);
  EXPECT_FALSE(r.store_error);
  EXPECT_THAT(r.error->message, HasSubstr("given back unsent"));
  EXPECT_EQ(r.marks.released, 1u);
}

TEST_F(OutboxWorkerTest, DrainThatLeftDueRowsUnattemptedIsNotOk) {
  options_.lease = milliseconds(5000);
  EXPECT_CALL(store_, ClaimDue(_)).WillOnce(Invoke([this](const relay::ClaimOptions&) {
    clock_.Advance(milliseconds(2500));
    return core::Result<relay::Claim>(MakeClaim({Row(1, "room-a"), Row(2, "room-b")}));
  }));
  RecordMarks();
  auto worker = MakeWorker();
  DrainResult d = worker.Drain();
  EXPECT_EQ(d.failed, 0u);
  EXPECT_EQ(d.unattempted, 2u);
  EXPECT_FALSE(d.ok()) << "--once must not exit 0 with due rows never tried";
}

TEST_F(OutboxWorkerTest, DrainRowsGivenBackAndTriedInALaterRoundCountAsAttempted) {
  // Rate limited: row 3 is given back, then claimed again and delivered in the next round.
  EXPECT_CALL(store_, ClaimDue(_))
      .WillOnce(Return(MakeClaim({Row(2, "room-b"), Row(3, "room-b")})))
      .WillOnce(Return(MakeClaim({Row(3, "room-b")})))
      .WillOnce(Return(MakeClaim({})));
  outcomes_["evt-2"] = {FailedWith(core::PublishStatus::kRateLimited, "im error 10023")};
  ScriptPublisher();
  RecordMarks();
  auto worker = MakeWorker();
  DrainResult d = worker.Drain();
  EXPECT_THAT(released_, ElementsAre(3));
  EXPECT_THAT(published_, ElementsAre(3));
  EXPECT_EQ(d.unattempted, 0u);
  EXPECT_EQ(d.failed, 1u);
}

TEST_F(OutboxWorkerTest, AWallClockStepChangesNeitherPacingNorTheLeaseLeft) {
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

TEST(WorkerConfigTest, OptionsNoConfigCanProduceAreRefused) {
  WorkerConfig config;
  EXPECT_FALSE(CheckWorkerConfig(config).has_value());
  config.lease = milliseconds(4500);  // < publish_timeout 3s + kLeaseMargin 2s
  auto broken = CheckWorkerConfig(config);
  ASSERT_TRUE(broken);
  EXPECT_EQ(broken->key, "lease");
  EXPECT_EQ(broken->fallback_key, "publish_timeout");
  config.lease = milliseconds(30000);
  config.max_in_flight = 0;
  broken = CheckWorkerConfig(config);
  ASSERT_TRUE(broken);
  EXPECT_EQ(broken->key, "max_in_flight");
  config.max_in_flight = 4;
  config.poll_interval = milliseconds(0);
  broken = CheckWorkerConfig(config);
  ASSERT_TRUE(broken);
  EXPECT_EQ(broken->key, "poll_interval");
  config.poll_interval = milliseconds(1000);
  config.room_min_interval = milliseconds(-1);
  broken = CheckWorkerConfig(config);
  ASSERT_TRUE(broken);
  EXPECT_EQ(broken->key, "room_min_interval");
}

TEST_F(OutboxWorkerTest, ToWorkerOptionsTakesTheConfigsValues) {
  WorkerConfig config;
  config.batch_size = 7;
  config.ordering = Ordering::kNone;
  WorkerOptions o = ToWorkerOptions(config, "node-x", {"RoomCreated"});
  EXPECT_EQ(o.batch_size, 7u);
  EXPECT_FALSE(o.per_room_order());
  EXPECT_EQ(o.lease, WorkerConfig{}.lease);
  EXPECT_EQ(o.node_id, "node-x");
  EXPECT_THAT(o.skip_event_types, ElementsAre("RoomCreated"));
}

// --- failure scopes ---

core::PublishOutcome RoomRefused() {
  core::PublishOutcome out =
      FailedWith(core::PublishStatus::kRateLimited, "MsgDropReason: MsgFreqCtrl");
  out.scope = core::FailureScope::kRoom;
  out.http_status = 200;
  out.definite_drop = true;
  return out;
}

TEST_F(OutboxWorkerTest, ARoomRefusalHoldsBackThatRoomOnlyAndTheBatchGoesOn) {
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
}

TEST_F(OutboxWorkerTest, TheDropCountIsTheDropGenerationOfTheSend) {
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

TEST_F(OutboxWorkerTest, RowsTheOpenBreakerKeepsBackAreReleasedUnchargedAndTheRoundStops) {
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

TEST_F(OutboxWorkerTest, WhileTheBreakerIsOpenTheDaemonWaitsPollIntervalBetweenRounds) {
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
