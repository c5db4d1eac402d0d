// [tencent_im.max_age_by_type] in the worker: a row too old when its turn comes is parked as
// expired (MarkParked, last_error "expired", retry_count unchanged), counted in
// room_outbox_expired_total{event_type}, never published, and its room's next row is sent in the
// same round. Other types, young rows, requeued rows and never-sent types are untouched.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "worker/outbox_worker.h"
#include "worker_fixture.h"

namespace room_outbox::relay {
namespace {

using std::chrono::milliseconds;
using ::testing::_;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Invoke;
using ::testing::IsEmpty;
using ::testing::Return;
using ::testing::UnorderedElementsAre;

class ExpiryWorkerTest : public ::room_outbox::testing::WorkerFixture {
 protected:
  // A row of `type` committed `age_ms` before the claim's server now (the fake clock's wall time).
  relay::OutboxRow Aged(int64_t id, const std::string& room, const std::string& type,
                        int64_t age_ms) {
    relay::OutboxRow row = Row(id, room, type);
    row.created_at_ms = clock_.NowMs() - age_ms;
    return row;
  }

  // Every sent event id, in the order of the waves.
  std::vector<std::string> Sent() const {
    std::vector<std::string> out;
    for (const auto& call : calls_) out.insert(out.end(), call.begin(), call.end());
    return out;
  }
};

TEST_F(ExpiryWorkerTest, AnExpiredHeadIsParkedUnsentAndItsRoomGoesOnInTheSameRound) {
  options_.max_age_by_type = {{"RoomGiftSent", milliseconds(60000)}};
  metrics_.DeclareExpiredTypes(options_.max_age_by_type);
  EXPECT_CALL(store_, ClaimDue(_))
      .WillOnce(Return(MakeClaim({Aged(1, "room-a", "RoomGiftSent", 120000),
                                  Aged(2, "room-a", "RoomGiftSent", 1000),
                                  Aged(3, "room-a", "RoomGiftSent", 90000)})));
  ScriptPublisher();
  RecordMarks();
  RecordParks();
  RoundResult r = MakeWorker().RunRound();

  // Row 1 is parked at its turn, row 2 is sent, row 3 (expired too) parked after it.
  EXPECT_THAT(Sent(), ElementsAre("evt-2"));
  EXPECT_THAT(published_, ElementsAre(2));
  EXPECT_THAT(Ids(parked_), ElementsAre(1, 3));
  for (const relay::FailedAttempt& a : parked_) {
    EXPECT_EQ(a.error, "expired") << a.id;
    EXPECT_FALSE(a.attempted) << a.id;  // retry_count unchanged: no attempt was made
  }
  EXPECT_THAT(failed_, IsEmpty());
  EXPECT_THAT(released_, IsEmpty());
  EXPECT_EQ(metrics_.expired("RoomGiftSent"), 2u);
  EXPECT_EQ(metrics_.publish_failure(), 0u);
  EXPECT_EQ(r.marks.expired, 2u);
  EXPECT_EQ(r.marks.failed, 0u);
  EXPECT_FALSE(r.error);
  EXPECT_THAT(log_.str(), AllOf(HasSubstr("outbox event expired"), HasSubstr("status=parked"),
                                HasSubstr("error=expired"), HasSubstr("event_id=evt-1")));
}

TEST_F(ExpiryWorkerTest, OtherTypesYoungRowsRequeuedRowsAndNeverSentTypesAreSent) {
  options_.max_age_by_type = {{"RoomGiftSent", milliseconds(60000)},
                              {"RoomHeatChanged", milliseconds(1000)}};
  metrics_.DeclareExpiredTypes(options_.max_age_by_type);
  not_sent_ = {"RoomHeatChanged"};
  relay::OutboxRow requeued = Aged(4, "room-d", "RoomGiftSent", 3'600'000);
  requeued.parked_before = true;
  EXPECT_CALL(store_, ClaimDue(_))
      .WillOnce(Return(MakeClaim({Aged(1, "room-a", "RoomUserJoined", 3'600'000),
                                  Aged(2, "room-b", "RoomGiftSent", 60000),
                                  Aged(3, "room-c", "RoomHeatChanged", 3'600'000), requeued})));
  ScriptPublisher();
  RecordMarks();  // a MarkParked would be unexpected (StrictMock)
  RoundResult r = MakeWorker().RunRound();

  EXPECT_THAT(Sent(), UnorderedElementsAre("evt-1", "evt-2", "evt-4"));
  EXPECT_THAT(published_, UnorderedElementsAre(1, 2, 3, 4));
  EXPECT_EQ(metrics_.expired("RoomGiftSent"), 0u);
  EXPECT_EQ(metrics_.expired("RoomHeatChanged"), 0u);
  EXPECT_EQ(r.marks.expired, 0u);
}

TEST_F(ExpiryWorkerTest, WithoutTheTableAnOldRowIsSentAsToday) {
  EXPECT_CALL(store_, ClaimDue(_))
      .WillOnce(Return(MakeClaim({Aged(1, "room-a", "RoomGiftSent", 86'400'000)})));
  ScriptPublisher();
  RecordMarks();
  RoundResult r = MakeWorker().RunRound();

  EXPECT_THAT(Sent(), ElementsAre("evt-1"));
  EXPECT_THAT(published_, ElementsAre(1));
  EXPECT_EQ(r.marks.expired, 0u);
  EXPECT_THAT(metrics_.RenderPrometheus(), ::testing::Not(HasSubstr("room_outbox_expired_total")));
}

TEST_F(ExpiryWorkerTest, AnExpiredRowWhoseParkIsNotRecordedIsNotCounted) {
  options_.max_age_by_type = {{"RoomGiftSent", milliseconds(60000)}};
  metrics_.DeclareExpiredTypes(options_.max_age_by_type);
  EXPECT_CALL(store_, ClaimDue(_))
      .WillOnce(Return(MakeClaim({Aged(1, "room-a", "RoomGiftSent", 120000)})));
  ScriptPublisher();
  RecordMarks();
  EXPECT_CALL(store_, MarkParked(kToken, _))
      .WillRepeatedly(Invoke([](const std::string&, std::span<const relay::FailedAttempt>) {
        return core::Result<size_t>(core::Fail(ErrorCode::kUnavailable, "server gone"));
      }));
  RoundResult r = MakeWorker().RunRound();

  EXPECT_THAT(Sent(), IsEmpty());
  EXPECT_EQ(metrics_.expired("RoomGiftSent"), 0u);  // the next claim expires it again
  EXPECT_TRUE(r.store_error);
}

}  // namespace
}  // namespace room_outbox::relay
