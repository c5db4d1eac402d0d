#include "worker/result_writer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include "mock_relay_store.h"

namespace room_outbox::relay {
namespace {

using ::room_outbox::testing::MockRelayStore;
using std::chrono::milliseconds;
using ::testing::_;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Invoke;
using ::testing::Not;
using ::testing::Return;
using ::testing::StrictMock;

relay::OutboxRow Row(int64_t id, int64_t retry_count = 0) {
  relay::OutboxRow row;
  row.id = id;
  row.event_id = "evt-" + std::to_string(id);
  row.event_type = "RoomGiftSent";
  row.room_id = "room-" + std::to_string(id);
  row.retry_count = retry_count;
  return row;
}

AttemptVerdict Failure(const std::string& error, milliseconds retry_after) {
  AttemptVerdict v;
  v.error = error;
  v.retry_after = retry_after;
  v.level = spdlog::level::warn;
  return v;
}

class ResultWriterTest : public ::testing::Test {
 protected:
  ResultWriter Make() { return ResultWriter(store_, metrics_, *logger_, "node-1", "tok"); }

  StrictMock<MockRelayStore> store_;
  Metrics metrics_;
  std::ostringstream log_;
  std::unique_ptr<Logger> logger_ = MakeStreamLogger(log_, LogFormat::kText, spdlog::level::trace);
};

TEST_F(ResultWriterTest, OneMarkOfEachKindPerFlushAndALinePerRow) {
  const relay::OutboxRow a = Row(1), b = Row(2, 4), c = Row(3);
  EXPECT_CALL(store_, MarkPublished("tok", ElementsAre(1, 3), _))
      .WillOnce(Return(core::Result<size_t>(2)));
  std::vector<relay::FailedAttempt> failed;
  EXPECT_CALL(store_, MarkFailed("tok", _))
      .WillOnce(Invoke([&](const std::string&, std::span<const relay::FailedAttempt> attempts) {
        failed.assign(attempts.begin(), attempts.end());
        return core::Result<size_t>(attempts.size());
      }));
  ResultWriter writer = Make();
  writer.Delivered(a);
  writer.Failed(b, Failure("retryable: http 502", milliseconds(1000)));
  writer.Delivered(c);
  writer.Flush();
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0].id, 2);
  EXPECT_EQ(failed[0].error, "retryable: http 502");
  // The delay goes to the store, which adds it to the server's clock.
  EXPECT_EQ(failed[0].retry_after_ms, 1000);
  EXPECT_EQ(writer.published(), 2u);
  EXPECT_EQ(writer.failed(), 1u);
  EXPECT_FALSE(writer.store_error());
  EXPECT_EQ(metrics_.publish_success(), 2u);
  EXPECT_EQ(metrics_.publish_failure(), 1u);
  EXPECT_THAT(log_.str(),
              HasSubstr("outbox event published worker=room_outbox node_id=node-1 event_id=evt-1 "
                        "event_type=RoomGiftSent room_id=room-1 retry_count=0 status=published "
                        "error=\"\""));
  EXPECT_THAT(log_.str(), HasSubstr("outbox event failed worker=room_outbox node_id=node-1 "
                                    "event_id=evt-2 event_type=RoomGiftSent room_id=room-2 "
                                    "retry_count=5 status=pending error=\"retryable: http 502\""));
}

// Each mark carries its rows' history entries: the notes of the attempts, a note the writer makes
// for a skipped row, and none at all when a row came without one (the store then writes none).
TEST_F(ResultWriterTest, TheMarksCarryEachRowsHistoryEntry) {
  const relay::OutboxRow a = Row(1), b = Row(2), c = Row(3);
  std::vector<std::string> published_notes;
  EXPECT_CALL(store_, MarkPublished("tok", ElementsAre(1, 3), _))
      .WillOnce(Invoke(
          [&](const std::string&, std::span<const int64_t>, std::span<const AttemptNote> notes) {
            for (const AttemptNote& n : notes) published_notes.push_back(n.text);
            return core::Result<size_t>(2);
          }));
  std::string failed_note;
  EXPECT_CALL(store_, MarkFailed("tok", _))
      .WillOnce(Invoke([&](const std::string&, std::span<const relay::FailedAttempt> attempts) {
        failed_note = attempts[0].note.text;
        return core::Result<size_t>(1);
      }));
  AttemptNote sent;
  sent.text = "node-1\t1\tpublished\thttp 200\t4";
  AttemptNote refused;
  refused.text = "node-1\t1\tretryable\thttp 502\t6";
  ResultWriter writer = Make();
  writer.Delivered(a, sent);
  writer.Failed(b, Failure("retryable: http 502", milliseconds(1000)), refused);
  writer.Skipped(c);
  writer.Flush();
  EXPECT_THAT(published_notes, ElementsAre(sent.text, "node-1\t0\tskipped\t-\t0"));
  EXPECT_EQ(failed_note, refused.text);

  EXPECT_CALL(store_, MarkPublished("tok", ElementsAre(1), _))
      .WillOnce(Invoke(
          [&](const std::string&, std::span<const int64_t>, std::span<const AttemptNote> notes) {
            EXPECT_TRUE(notes.empty()) << "a row without a note: no entries for the batch";
            return core::Result<size_t>(1);
          }));
  writer.Delivered(a);
  writer.Flush();
}

TEST_F(ResultWriterTest, AnEmptyFlushWritesNothing) {
  ResultWriter writer = Make();
  writer.Flush();  // StrictMock: no store call
  writer.Release({});
  EXPECT_EQ(writer.published(), 0u);
}

TEST_F(ResultWriterTest, RowsTakenOverByAnotherClaimAreAWarningNotAnError) {
  const relay::OutboxRow a = Row(1), b = Row(2);
  EXPECT_CALL(store_, MarkPublished("tok", _, _)).WillOnce(Return(core::Result<size_t>(1)));
  ResultWriter writer = Make();
  writer.Delivered(a);
  writer.Delivered(b);
  writer.Flush();
  EXPECT_FALSE(writer.store_error());
  EXPECT_THAT(log_.str(), HasSubstr("rows were taken over by another claim; result not written "
                                    "worker=room_outbox node_id=node-1 operation=mark_published "
                                    "rows=1"));
}

TEST_F(ResultWriterTest, AFailingMarkIsAStoreErrorAndTheLinesSayPending) {
  const relay::OutboxRow a = Row(1);
  EXPECT_CALL(store_, MarkPublished("tok", _, _))
      .WillOnce(Return(core::Fail(ErrorCode::kUnavailable, "server gone")));
  ResultWriter writer = Make();
  writer.Delivered(a);
  writer.Flush();
  ASSERT_TRUE(writer.store_error());
  EXPECT_EQ(writer.store_error()->code, ErrorCode::kUnavailable);
  EXPECT_EQ(writer.published(), 0u);
  EXPECT_THAT(log_.str(), HasSubstr("marking rows published failed"));
  EXPECT_THAT(log_.str(),
              HasSubstr("status=pending error=\"result not recorded: database error\""));
}

TEST_F(ResultWriterTest, ReleaseGivesBackRowsNotAttempted) {
  EXPECT_CALL(store_, Release("tok", ElementsAre(4, 5))).WillOnce(Return(core::Result<size_t>(2)));
  ResultWriter writer = Make();
  const std::vector<int64_t> ids{4, 5};
  writer.Release(ids);
  EXPECT_FALSE(writer.store_error());
  EXPECT_THAT(log_.str(), Not(HasSubstr("taken over")));
}

TEST_F(ResultWriterTest, AFailingReleaseIsAStoreError) {
  EXPECT_CALL(store_, Release("tok", _))
      .WillOnce(Return(core::Fail(ErrorCode::kUnavailable, "lost connection")));
  ResultWriter writer = Make();
  const std::vector<int64_t> ids{4};
  writer.Release(ids);
  ASSERT_TRUE(writer.store_error());
  EXPECT_THAT(log_.str(), HasSubstr("releasing rows failed"));
}

}  // namespace
}  // namespace room_outbox::relay
