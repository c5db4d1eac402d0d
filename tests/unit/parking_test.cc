// The worker side of parking and log volume: ParkPolicy wired into the worker and the result
// writer (MarkParked instead of MarkFailed), the failure-by-reason and in-flight metrics, and the
// levels of the per-row and per-room lines (HeldRooms).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "worker/outbox_worker.h"
#include "worker/result_writer.h"
#include "worker_fixture.h"

namespace room_outbox::relay {
namespace {

using ::room_outbox::testing::FailedWith;
using ::room_outbox::testing::MockRelayStore;
using ::room_outbox::testing::Published;
using ::room_outbox::testing::WorkerRow;
using std::chrono::milliseconds;
using ::testing::_;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Invoke;
using ::testing::NiceMock;
using ::testing::Return;

relay::OutboxRow Row(int64_t id, const std::string& room, int64_t retry_count = 0) {
  return WorkerRow(id, room, "RoomGiftSent", retry_count);
}

// Lines of `log` at `level` ("warning", "info", ...) that contain `text`.
size_t Lines(const std::string& log, const std::string& level, const std::string& text) {
  std::istringstream in(log);
  std::string line;
  size_t n = 0;
  while (std::getline(in, line)) {
    if (line.rfind(level + " ", 0) == 0 && line.find(text) != std::string::npos) ++n;
  }
  return n;
}

// The worker's collaborators and recorded marks (tests/mocks/worker_fixture.h), parks included.
class ParkingWorkerTest : public ::room_outbox::testing::WorkerFixture {
 protected:
  ParkingWorkerTest() {
    RecordMarks();
    RecordParks();
  }

  // One round over `rows`; `outcome_of` answers each message by its event id.
  RoundResult RunOnce(std::vector<relay::OutboxRow> rows,
                      std::function<core::PublishOutcome(const std::string&)> outcome_of) {
    relay::Claim claim;
    claim.token = kToken;
    claim.rows = std::move(rows);
    EXPECT_CALL(store_, ClaimDue(_)).WillOnce(Return(core::Result<relay::Claim>(claim)));
    EXPECT_CALL(publisher_, PublishMany(_, _, _))
        .WillRepeatedly(Invoke([this, outcome_of](std::span<const core::PublishMessage> messages,
                                                  milliseconds, size_t) {
          in_flight_seen_.push_back(metrics_.in_flight());
          std::vector<core::PublishOutcome> out;
          for (const core::PublishMessage& m : messages) {
            sent_.push_back(m.envelope.event_id);
            out.push_back(outcome_of(m.envelope.event_id));
          }
          return out;
        }));
    return MakeWorker().RunRound();
  }

  std::vector<std::string> sent_;
  std::vector<int64_t> in_flight_seen_;
};

core::PublishOutcome GroupDissolved() {
  return FailedWith(core::PublishStatus::kPermanent, "im error 10010: group dissolved");
}

TEST_F(ParkingWorkerTest, APermanentFailureAtTheNthAttemptParksAndGivesTheRoomBack) {
  options_.park_permanent_after = 3;
  // Room A: the head fails permanently for the third time; its later row goes back unattempted
  // (the next claim takes it, the parked head no longer counts). Room B: a permanent failure at
  // the second attempt is marked failed. Room C: a transient failure never parks.
  const RoundResult round = RunOnce(
      {Row(1, "A", 2), Row(2, "A"), Row(3, "B", 1), Row(4, "C", 9)}, [](const std::string& id) {
        if (id == "evt-4") return FailedWith(core::PublishStatus::kRetryable, "http 502");
        return GroupDissolved();
      });
  EXPECT_THAT(Ids(parked_), ElementsAre(1));
  EXPECT_EQ(parked_[0].error, "permanent: im error 10010: group dissolved");
  EXPECT_THAT(Ids(failed_), ElementsAre(3, 4));
  EXPECT_THAT(released_, ElementsAre(2));
  EXPECT_THAT(sent_, ElementsAre("evt-1", "evt-3", "evt-4"));
  EXPECT_EQ(round.marks.failed, 3u);
  EXPECT_EQ(metrics_.publish_failure(), 3u);
  EXPECT_EQ(metrics_.publish_failure(FailureReason::kPermanent), 2u);
  EXPECT_EQ(metrics_.publish_failure(FailureReason::kHttp), 1u);
  // In flight while PublishMany ran, none after.
  EXPECT_THAT(in_flight_seen_, ElementsAre(3));
  EXPECT_EQ(metrics_.in_flight(), 0);
  const std::string log = log_.str();
  EXPECT_EQ(Lines(log, "error", "outbox event parked"), 1u) << log;
  EXPECT_THAT(log, HasSubstr("event_id=evt-1 event_type=RoomGiftSent room_id=A retry_count=3 "
                             "status=parked error=\"permanent: im error 10010: group dissolved\" "
                             "parked_after=3"));
  // A parked head holds nothing back.
  EXPECT_EQ(Lines(log, "info", "room held back"), 0u) << log;
}

TEST_F(ParkingWorkerTest, BreakerRejectionsAreNotCountedAsFailedAttemptsByReason) {
  RunOnce({Row(1, "A")}, [](const std::string&) {
    return FailedWith(core::PublishStatus::kNotAttempted, "circuit breaker open");
  });
  for (size_t r = 0; r < kFailureReasonCount; ++r) {
    EXPECT_EQ(metrics_.publish_failure(static_cast<FailureReason>(r)), 0u) << r;
  }
}

TEST_F(ParkingWorkerTest, TheDefaultZeroNeverParks) {
  options_.park_permanent_after = 0;
  EXPECT_CALL(store_, MarkParked(_, _)).Times(0);
  RunOnce({Row(1, "A", 500)}, [](const std::string&) { return GroupDissolved(); });
  EXPECT_THAT(Ids(failed_), ElementsAre(1));
}

TEST_F(ParkingWorkerTest, AnUndecodableRowParksAtTheNthAttemptAndIsCountedByReason) {
  options_.park_permanent_after = 2;
  relay::OutboxRow bad = Row(1, "A", 1);
  bad.envelope = "not json";
  relay::OutboxRow fresh_bad = Row(2, "B", 0);
  fresh_bad.envelope = "{";
  const RoundResult round =
      RunOnce({bad, Row(3, "A"), fresh_bad}, [](const std::string&) { return Published(); });
  EXPECT_THAT(Ids(parked_), ElementsAre(1));
  EXPECT_THAT(Ids(failed_), ElementsAre(2));
  EXPECT_THAT(released_, ElementsAre(3));
  EXPECT_TRUE(sent_.empty());
  EXPECT_EQ(round.marks.undecodable, 2u);
  EXPECT_EQ(metrics_.publish_failure(FailureReason::kUndecodable), 2u);
  // Room A's later row went back behind the parked head: not a held room. Room B is empty.
  EXPECT_EQ(Lines(log_.str(), "info", "room held back"), 0u) << log_.str();
  EXPECT_EQ(Lines(log_.str(), "info", "room released"), 0u) << log_.str();
}

TEST_F(ParkingWorkerTest, OneSummaryLinePerRoundWithFailuresAndNoneWithout) {
  RunOnce({Row(1, "A"), Row(2, "A"), Row(3, "B", 4), Row(4, "C")}, [](const std::string& id) {
    if (id == "evt-4") return Published();
    return FailedWith(core::PublishStatus::kRetryable, "im error 10002: internal error");
  });
  const std::string log = log_.str();
  EXPECT_EQ(Lines(log, "warning", "outbox round had failures"), 1u) << log;
  EXPECT_THAT(log, HasSubstr("outbox round had failures worker=room_outbox node_id=node-1 "
                             "failed=2 parked=0 published=1 rooms_held=1 released=1 "
                             "error=\"retryable: im error 10002: internal error\""));
  // The first failure of evt-1 at warn, the fifth of evt-3 at debug.
  EXPECT_EQ(Lines(log, "warning", "outbox event failed"), 1u) << log;
  EXPECT_EQ(Lines(log, "debug", "outbox event failed"), 1u) << log;
  // The room entering the held state: info.
  EXPECT_EQ(Lines(log, "info", "room held back by a failing head row"), 1u) << log;

  log_.str("");
  RunOnce({Row(5, "D")}, [](const std::string&) { return Published(); });
  EXPECT_EQ(log_.str().find("outbox round had failures"), std::string::npos) << log_.str();
}

TEST_F(ParkingWorkerTest, DbUpFollowsEachDaemonRound) {
  metrics_.SetDbUp(false);
  EXPECT_CALL(store_, ClaimDue(_))
      .WillOnce(Return(
          core::Result<relay::Claim>(relay::Claim{kToken, 0, 0, {}, false, {}, std::nullopt})))
      .WillOnce(Invoke([this](const relay::ClaimOptions&) -> core::Result<relay::Claim> {
        EXPECT_TRUE(metrics_.db_up());
        return core::Fail(ErrorCode::kUnavailable, "server gone");
      }))
      .WillOnce(Invoke([this](const relay::ClaimOptions&) -> core::Result<relay::Claim> {
        EXPECT_FALSE(metrics_.db_up());
        stop_.RequestStop();
        return core::Result<relay::Claim>(relay::Claim{kToken, 0, 0, {}, false, {}, std::nullopt});
      }));
  auto worker = MakeWorker();
  worker.Run();
  EXPECT_TRUE(metrics_.db_up());
}

// --- ResultWriter and HeldRooms: the levels across rounds ---

class LogVolumeTest : public ::testing::Test {
 protected:
  LogVolumeTest() {
    ON_CALL(store_, MarkPublished(_, _, _))
        .WillByDefault(
            Invoke([](const std::string&, std::span<const int64_t> ids,
                      std::span<const AttemptNote>) { return core::Result<size_t>(ids.size()); }));
    ON_CALL(store_, MarkFailed(_, _))
        .WillByDefault(Invoke([](const std::string&, std::span<const relay::FailedAttempt> a) {
          return core::Result<size_t>(a.size());
        }));
  }
  ResultWriter Writer() { return ResultWriter(store_, metrics_, *logger_, "n", "tok", &held_); }
  static AttemptVerdict Transient() {
    AttemptVerdict v;
    v.error = "retryable: http 502";
    v.retry_after = milliseconds(1000);
    v.level = spdlog::level::warn;
    return v;
  }

  NiceMock<MockRelayStore> store_;
  Metrics metrics_;
  HeldRooms held_;
  std::ostringstream log_;
  std::unique_ptr<Logger> logger_ = MakeStreamLogger(log_, LogFormat::kText, spdlog::level::trace);
};

TEST_F(LogVolumeTest, FirstFailureWarnsLaterOnesAreDebugAndRecoveryIsInfo) {
  for (int64_t retry_count = 0; retry_count < 5; ++retry_count) {
    ResultWriter writer = Writer();
    const relay::OutboxRow head = Row(1, "A", retry_count);
    writer.Failed(head, Transient());
    writer.HeldBack("A", head.event_id, 3, retry_count * 1000);
    writer.Flush();
  }
  ResultWriter writer = Writer();
  const relay::OutboxRow head = Row(1, "A", 5);
  writer.Delivered(head);
  writer.Flush();
  const std::string log = log_.str();
  EXPECT_EQ(Lines(log, "warning", "outbox event failed"), 1u) << log;
  EXPECT_EQ(Lines(log, "debug", "outbox event failed"), 4u) << log;
  EXPECT_EQ(Lines(log, "info", "room held back by a failing head row"), 1u) << log;
  EXPECT_EQ(Lines(log, "debug", "room held back by a failing head row"), 4u) << log;
  EXPECT_EQ(Lines(log, "info", "outbox event published after failures"), 1u) << log;
  EXPECT_THAT(log, HasSubstr("status=published error=\"\" after_failures=5"));
  EXPECT_EQ(Lines(log, "info", "room released"), 1u) << log;
  EXPECT_THAT(log, HasSubstr("room released worker=room_outbox node_id=n room_id=A "
                             "event_id=evt-1 head=published"));
  EXPECT_EQ(held_.size(), 0u);
}

TEST_F(LogVolumeTest, AParkedHeadReleasesItsRoom) {
  ON_CALL(store_, MarkParked(_, _))
      .WillByDefault(Invoke([](const std::string&, std::span<const relay::FailedAttempt> a) {
        return core::Result<size_t>(a.size());
      }));
  held_.Hold("A", 0);
  ResultWriter writer = Writer();
  const relay::OutboxRow head = Row(1, "A", 2);
  AttemptVerdict v = Transient();
  v.error = "permanent: im error 10010";
  writer.Parked(head, v, 3);
  writer.Flush();
  EXPECT_EQ(writer.parked(), 1u);
  EXPECT_EQ(writer.failed(), 1u);
  EXPECT_EQ(Lines(log_.str(), "info", "room released"), 1u) << log_.str();
  EXPECT_THAT(log_.str(), HasSubstr("head=parked"));
}

TEST_F(LogVolumeTest, AnUnrecordedParkIsAnErrorLineSayingPending) {
  ON_CALL(store_, MarkParked(_, _))
      .WillByDefault(
          Return(core::Result<size_t>(core::Fail(ErrorCode::kUnavailable, "server gone"))));
  held_.Hold("A", 0);
  ResultWriter writer = Writer();
  const relay::OutboxRow head = Row(1, "A", 2);
  writer.Parked(head, Transient(), 3);
  writer.Flush();
  ASSERT_TRUE(writer.store_error());
  EXPECT_EQ(writer.parked(), 0u);
  EXPECT_THAT(log_.str(), HasSubstr("parking rows failed"));
  EXPECT_THAT(log_.str(), HasSubstr("retry_count=2 status=pending"));
  // Still held: nothing left the room.
  EXPECT_EQ(held_.size(), 1u);
}

TEST(HeldRoomsTest, EntersOnceForgetsRoomsNotSeenAndStaysBounded) {
  HeldRooms held(milliseconds(1000), 2);
  EXPECT_TRUE(held.Hold("A", 0));
  EXPECT_FALSE(held.Hold("A", 900));
  EXPECT_TRUE(held.Hold("B", 950));
  // A was seen at 900: kept at 1800, gone at 2000 (not seen for more than 1000 ms).
  EXPECT_FALSE(held.Hold("B", 1800));
  EXPECT_EQ(held.size(), 2u);
  EXPECT_TRUE(held.Hold("C", 1850));  // over the bound: A, the least recently seen, goes
  EXPECT_EQ(held.size(), 2u);
  EXPECT_TRUE(held.Hold("A", 1900));
  EXPECT_EQ(held.size(), 2u);
  EXPECT_TRUE(held.Release("A"));
  EXPECT_FALSE(held.Release("A"));
  EXPECT_TRUE(held.Hold("D", 5000));  // B and C forgotten by now
  EXPECT_EQ(held.size(), 1u);
}

}  // namespace
}  // namespace room_outbox::relay
