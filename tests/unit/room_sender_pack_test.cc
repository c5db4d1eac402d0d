// RoomSender with pack_max_events > 1: which rows go out together, and how one answer marks them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "worker/outbox_worker.h"
#include "worker/room_sender.h"
#include "worker_fixture.h"

namespace room_outbox::relay {
namespace {

using ::room_outbox::testing::Published;
using std::chrono::milliseconds;
using ::testing::_;
using ::testing::ElementsAre;
using ::testing::Return;

class RoomSenderPackTest : public ::room_outbox::testing::WorkerFixture {
 protected:
  RoomSenderPackTest() {
    options_.pack_max_events = 3;
    options_.room_min_interval = milliseconds(0);
  }

  // One round of `rows` through the worker, the publisher scripted, the marks recorded.
  void RunRound(std::vector<OutboxRow> rows) {
    EXPECT_CALL(store_, ClaimDue(_)).WillOnce(Return(MakeClaim(std::move(rows))));
    ScriptPublisher();
    RecordMarks();
    auto worker = MakeWorker();
    worker.RunRound();
  }

  static core::PublishOutcome Unknown() {
    core::PublishOutcome o;
    o.status = core::PublishStatus::kUnknown;
    o.error = "timeout after 3000ms";
    return o;
  }

  std::vector<uint32_t> FailedPackSizes() const {
    std::vector<uint32_t> out;
    for (const FailedAttempt& a : failed_) out.push_back(a.pack_size);
    return out;
  }
};

TEST_F(RoomSenderPackTest, APackTakesARoomsConsecutiveRowsUpToPackMaxEvents) {
  RunRound({Row(1, "room-a"), Row(2, "room-a"), Row(3, "room-a"), Row(4, "room-a"),
            Row(5, "room-a"), Row(6, "room-b")});
  ASSERT_EQ(calls_.size(), 2u);
  EXPECT_THAT(calls_[0], ElementsAre("evt-1+evt-2+evt-3", "evt-6"));
  EXPECT_THAT(calls_[1], ElementsAre("evt-4+evt-5"));
  EXPECT_THAT(published_, ::testing::UnorderedElementsAre(1, 2, 3, 4, 5, 6));
  EXPECT_EQ(metrics_.messages_delivered(), 3u);
  EXPECT_EQ(metrics_.message_events(), 6u);
}

TEST_F(RoomSenderPackTest, OneEventPerMessageWithoutPacking) {
  options_.pack_max_events = 1;
  RunRound({Row(1, "room-a"), Row(2, "room-a")});
  ASSERT_EQ(calls_.size(), 2u);
  EXPECT_THAT(calls_[0], ElementsAre("evt-1"));
  EXPECT_THAT(calls_[1], ElementsAre("evt-2"));
}

TEST_F(RoomSenderPackTest, AFailedPackFailsEveryRowAndRecordsItsSizeOnTheFirst) {
  outcomes_["evt-1"] = {Unknown()};
  RunRound({Row(1, "room-a"), Row(2, "room-a"), Row(3, "room-a"), Row(4, "room-a")});
  ASSERT_EQ(calls_.size(), 1u);
  EXPECT_THAT(FailedIds(), ElementsAre(1, 2, 3));
  EXPECT_THAT(FailedPackSizes(), ElementsAre(3u, 0u, 0u));
  EXPECT_THAT(released_, ElementsAre(4)) << "the room's later row is held back, not tried";
  EXPECT_TRUE(published_.empty());
}

TEST_F(RoomSenderPackTest, ADefinitelyDroppedPackRecordsNoSizeAndCountsADrop) {
  core::PublishOutcome dropped;
  dropped.status = core::PublishStatus::kRateLimited;
  dropped.scope = core::FailureScope::kRoom;
  dropped.definite_drop = true;
  dropped.error = "MsgDropReason MsgFreqCtrl";
  outcomes_["evt-1"] = {dropped};
  RunRound({Row(1, "room-a"), Row(2, "room-a")});
  ASSERT_EQ(failed_.size(), 2u);
  EXPECT_THAT(FailedPackSizes(), ElementsAre(0u, 0u));
  EXPECT_TRUE(failed_[0].dropped);
  EXPECT_TRUE(failed_[1].dropped);
}

TEST_F(RoomSenderPackTest, ARecordedPackIsSentAgainWithTheSameRows) {
  options_.pack_max_events = 20;
  OutboxRow head = Row(1, "room-a", int64_t{1});
  head.pack_size = 2;  // its last send carried rows 1 and 2, and its outcome was not known
  RunRound({head, Row(2, "room-a", int64_t{1}), Row(3, "room-a"), Row(4, "room-a")});
  ASSERT_EQ(calls_.size(), 2u);
  EXPECT_THAT(calls_[0], ElementsAre("evt-1+evt-2"));
  EXPECT_THAT(calls_[1], ElementsAre("evt-3+evt-4"));
}

TEST_F(RoomSenderPackTest, ARecordedPackTheRoundHoldsPartOfIsSentAtOnceWithAWarning) {
  OutboxRow head = Row(1, "room-a", int64_t{1});
  head.pack_size = 5;  // its last send carried 5 rows; this round holds 2 of them
  RunRound({head, Row(2, "room-a", int64_t{1})});
  ASSERT_EQ(calls_.size(), 1u);
  EXPECT_THAT(calls_[0], ElementsAre("evt-1+evt-2"));
  EXPECT_THAT(log_.str(), ::testing::HasSubstr("recorded pack resent with fewer events"));
  EXPECT_THAT(log_.str(), ::testing::HasSubstr("pack_size=5 events=2"));

  // The whole pack again: no warning.
  log_.str("");
  calls_.clear();
  head.pack_size = 2;
  RunRound({head, Row(2, "room-a", int64_t{1})});
  EXPECT_THAT(log_.str(), ::testing::Not(::testing::HasSubstr("recorded pack")));
}

TEST_F(RoomSenderPackTest, APackEndsBeforeARowThatIsNotSent) {
  not_sent_ = {"RoomHeatChanged"};
  RunRound({Row(1, "room-a"), Row(2, "room-a"), Row(3, "room-a", "RoomHeatChanged"),
            Row(4, "room-a")});
  ASSERT_EQ(calls_.size(), 2u);
  EXPECT_THAT(calls_[0], ElementsAre("evt-1+evt-2"));
  EXPECT_THAT(calls_[1], ElementsAre("evt-4"));
  EXPECT_THAT(published_, ::testing::UnorderedElementsAre(1, 2, 3, 4));
}

TEST_F(RoomSenderPackTest, APackEndsBeforeTheRowThatWouldTakeTheBodyPastMaxBodyBytes) {
  const std::vector<OutboxRow> rows = {Row(1, "room-a"), Row(2, "room-a"), Row(3, "room-a")};
  core::PackBodySize two("", "room-a", "evt-1");
  two.Add(rows[0].envelope);
  two.Add(rows[1].envelope);
  options_.max_body_bytes = two.With(rows[2].envelope) - 1;  // room for two events, not three
  RunRound(rows);
  ASSERT_EQ(calls_.size(), 2u);
  EXPECT_THAT(calls_[0], ElementsAre("evt-1+evt-2"));
  EXPECT_THAT(calls_[1], ElementsAre("evt-3"));
}

TEST_F(RoomSenderPackTest, APackTheBreakerKeepsBackIsGivenBackUncharged) {
  core::PublishOutcome kept;
  kept.status = core::PublishStatus::kNotAttempted;
  kept.scope = core::FailureScope::kApp;
  outcomes_["evt-1"] = {kept};
  breaker_open_ = true;
  RunRound({Row(1, "room-a"), Row(2, "room-a"), Row(3, "room-a")});
  EXPECT_TRUE(failed_.empty());
  EXPECT_THAT(released_, ::testing::UnorderedElementsAre(1, 2, 3));
}

}  // namespace
}  // namespace room_outbox::relay
