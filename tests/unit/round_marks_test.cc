// RoundMarks through its own API, and what a round writes back through OutboxWorker.
#include "worker/round_marks.h"

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
using ::room_outbox::testing::Skipped;
using std::chrono::milliseconds;
using ::testing::_;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Invoke;
using ::testing::Return;
using ::testing::StartsWith;

// The worker's collaborators, options and recorded marks: tests/mocks/worker_fixture.h.
class RoundMarksTest : public ::room_outbox::testing::WorkerFixture {};

// A RoundMarks over the fixture's store, with `park_after` as park_permanent_after.
struct MarksUnderTest {
  MarksUnderTest(::room_outbox::testing::MockRelayStore& store, relay::Metrics& metrics,
                 Logger& logger, core::Clock& clock, int64_t park_after)
      : retry(milliseconds(1000), milliseconds(1000)),
        park(park_after),
        marks(MarkDeps{store, metrics, logger, clock, retry, park, &held, "node-1"},
              "claim-token") {}
  RetryPolicy retry;
  ParkPolicy park;
  HeldRooms held;
  RoundMarks marks;
};

TEST_F(RoundMarksTest, AFailedAttemptIsMarkedFailedAtFlush) {
  RecordMarks();
  MarksUnderTest m(store_, metrics_, *logger_, clock_, 0);
  const OutboxRow row = Row(1, "room-a");
  EXPECT_EQ(m.marks.Attempted(row, FailedWith(core::PublishStatus::kRetryable, "im error")),
            AttemptMark::kFailed);
  EXPECT_TRUE(failed_.empty()) << "nothing is written before Flush";
  EXPECT_TRUE(m.marks.Flush());
  EXPECT_THAT(FailedIds(), ElementsAre(1));
  EXPECT_EQ(failed_[0].retry_after_ms, 1000);
}

TEST_F(RoundMarksTest, APermanentFailureAtTheParkThresholdParksTheRow) {
  RecordMarks();
  RecordParks();
  MarksUnderTest m(store_, metrics_, *logger_, clock_, 1);
  const OutboxRow row = Row(1, "room-a");
  EXPECT_EQ(m.marks.Attempted(row, FailedWith(core::PublishStatus::kPermanent, "10010")),
            AttemptMark::kParked);
  EXPECT_TRUE(m.marks.Flush());
  EXPECT_THAT(Ids(parked_), ElementsAre(1));
  EXPECT_TRUE(failed_.empty());
}

TEST_F(RoundMarksTest, AnUndecodableRowIsAFailedAttemptAndTheDecodeError) {
  RecordMarks();
  MarksUnderTest m(store_, metrics_, *logger_, clock_, 0);
  const OutboxRow row = Row(4, "room-a");
  m.marks.Undecodable(UndecodableRow{&row, "not json"});
  ASSERT_TRUE(m.marks.decode_error());
  EXPECT_EQ(m.marks.decode_error()->code, ErrorCode::kInvalidArgument);
  EXPECT_THAT(m.marks.decode_error()->message, StartsWith("event evt-4: "));
  const MarksOutcome out = m.marks.Close({});
  EXPECT_EQ(out.undecodable, 1u);
  EXPECT_EQ(out.failed, 1u);
  EXPECT_THAT(FailedIds(), ElementsAre(4));
}

TEST_F(RoundMarksTest, CloseWritesTheLastMarksAndReleasesTheRowsGivenBack) {
  RecordMarks();
  MarksUnderTest m(store_, metrics_, *logger_, clock_, 0);
  const OutboxRow row = Row(1, "room-a");
  EXPECT_EQ(m.marks.Attempted(row, Published()), AttemptMark::kDelivered);
  const std::vector<int64_t> given_back = {2, 3};
  const MarksOutcome out = m.marks.Close(given_back);
  EXPECT_EQ(out.published, 1u);
  EXPECT_EQ(out.released, 2u);
  EXPECT_THAT(published_, ElementsAre(1));
  EXPECT_THAT(released_, ElementsAre(2, 3));
}

TEST_F(RoundMarksTest, FailureIsMarkedFailedWithErrorAndDueAfterPollInterval) {
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

TEST_F(RoundMarksTest, OneFailureDoesNotStopTheBatch) {
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

TEST_F(RoundMarksTest, UndecodableEnvelopeIsKeptWithItsErrorAndTheRestContinue) {
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

TEST_F(RoundMarksTest, HostileEnvelopesAreKeptWithAShortErrorAndTheRestContinue) {
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

TEST_F(RoundMarksTest, UndecodableHeadRowHoldsBackItsRoom) {
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

TEST_F(RoundMarksTest, SkippedTypeIsMarkedPublished) {
  EXPECT_CALL(store_, ClaimDue(_)).WillOnce(Return(MakeClaim({Row(1, "room-a", "RoomCreated")})));
  outcomes_["evt-1"] = {Skipped()};
  ScriptPublisher();
  RecordMarks();
  auto worker = MakeWorker();
  RoundResult r = worker.RunRound();
  EXPECT_THAT(published_, ElementsAre(1));  // marked published: kept, never sent again
  EXPECT_EQ(r.marks.skipped, 1u);           // but counted apart from what IM accepted
  EXPECT_EQ(r.marks.published, 0u);
  EXPECT_TRUE(failed_.empty());
}

TEST_F(RoundMarksTest, MarkPublishedErrorIsARoundError) {
  EXPECT_CALL(store_, ClaimDue(_)).WillOnce(Return(MakeClaim({Row(1, "room-a")})));
  ScriptPublisher();
  EXPECT_CALL(store_, MarkPublished(kToken, _, _))
      .WillOnce(
          Return(core::Fail(ErrorCode::kUnavailable, "mysql_stmt_execute(mark_published): gone")));
  auto worker = MakeWorker();
  RoundResult r = worker.RunRound();
  ASSERT_TRUE(r.error);
  EXPECT_TRUE(r.store_error);
  EXPECT_THAT(r.error->message, HasSubstr("mark_published"));
}

TEST_F(RoundMarksTest, MarkFailedErrorIsARoundError) {
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

TEST_F(RoundMarksTest, ResultsAreMarkedAfterEachWave) {
  EXPECT_CALL(store_, ClaimDue(_))
      .WillOnce(Return(MakeClaim({Row(1, "room-a"), Row(2, "room-a"), Row(3, "room-b")})));
  std::vector<std::string> sequence;
  during_publish_ = [&] { sequence.push_back("publish " + calls_.back().front()); };
  ScriptPublisher();
  EXPECT_CALL(store_, MarkPublished(kToken, _, _))
      .WillRepeatedly(Invoke(
          [&](const std::string&, std::span<const int64_t> ids, std::span<const AttemptNote>) {
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

TEST_F(RoundMarksTest, MarkErrorMidRoundStopsSendingAndReleasesTheRest) {
  EXPECT_CALL(store_, ClaimDue(_))
      .WillOnce(Return(MakeClaim({Row(1, "room-a"), Row(2, "room-a"), Row(3, "room-a")})));
  ScriptPublisher();
  EXPECT_CALL(store_, MarkPublished(kToken, _, _))
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

TEST_F(RoundMarksTest, LongErrorTextIsShortened) {
  EXPECT_CALL(store_, ClaimDue(_)).WillOnce(Return(MakeClaim({Row(1, "room-a")})));
  outcomes_["evt-1"] = {FailedWith(core::PublishStatus::kRetryable, std::string(5000, 'x'))};
  ScriptPublisher();
  RecordMarks();
  auto worker = MakeWorker();
  worker.RunRound();
  ASSERT_EQ(failed_.size(), 1u);
  EXPECT_LE(failed_[0].error.size(), 210u);
}

TEST_F(RoundMarksTest, OutcomeLineCarriesTheSeedFields) {
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

}  // namespace
}  // namespace room_outbox::relay
