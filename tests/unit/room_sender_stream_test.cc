// RoomSender over a publisher that streams (FakeStreamPublisher, in FakeClock time): a room's next
// message goes as soon as the one before it is answered, whatever the other rooms' messages do;
// one message per room in flight; marks in batches, within the crash bound; pacing per room.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fake_stream_publisher.h"
#include "worker/room_sender.h"
#include "worker_fixture.h"

namespace room_outbox::relay {
namespace {

using ::room_outbox::testing::FailedWith;
using ::room_outbox::testing::FakeStreamPublisher;
using ::room_outbox::testing::Published;
using std::chrono::milliseconds;
using ::testing::_;
using ::testing::ElementsAre;
using ::testing::UnorderedElementsAreArray;

class RoomSenderStreamTest : public ::room_outbox::testing::WorkerFixture {
 protected:
  // One round of `rows` sent through `stream_`, as OutboxWorker hands it to RoomSender.
  SendOutcome SendRound(std::vector<OutboxRow> rows) {
    Claim claim = MakeClaim(std::move(rows));
    RoundContext round(
        RoundMode::kDaemon, std::move(claim), clock_.SteadyMs() + options_.lease.count(),
        options_.per_room_order(),
        MarkDeps{store_, metrics_, *logger_, clock_, retry_, park_, nullptr, options_.node_id},
        nullptr);
    round.queues.Load(round.claim.rows, [](const OutboxRow&) { return false; });
    RoomSender sender(options_, stream_, clock_, stop_, pacing_, waits_, metrics_, *logger_);
    const SendOutcome sent = sender.Send(round);
    round.marks.Close(round.queues.released());
    return sent;
  }

  static std::vector<OutboxRow> Rooms(const std::vector<std::pair<std::string, int>>& rooms) {
    std::vector<OutboxRow> rows;
    int64_t id = 1;
    for (const auto& [room, count] : rooms) {
      for (int i = 0; i < count; ++i) rows.push_back(Row(id++, room));
    }
    std::sort(rows.begin(), rows.end(),
              [](const OutboxRow& a, const OutboxRow& b) { return a.id < b.id; });
    return rows;
  }

  std::vector<int64_t> Relative(std::vector<int64_t> times) const {
    for (int64_t& t : times) t -= start_;
    return times;
  }

  FakeStreamPublisher stream_{clock_};
  const int64_t start_ = clock_.SteadyMs();
  RetryPolicy retry_{options_.poll_interval, options_.rate_limited_retry};
  ParkPolicy park_{0};
  RoomPacing pacing_{milliseconds(0)};
  LoopWaits waits_{options_.poll_interval, options_.wake_min_interval, clock_, stop_, pacing_};
};

TEST_F(RoomSenderStreamTest, ARoomsNextMessageGoesWhenItsAnswerComesNotWithTheSlowestRoom) {
  RecordMarks();
  stream_.latency = [](const core::PublishMessage& m) {
    return milliseconds(m.envelope.room_id == "slow" ? 200 : 10);
  };
  SendRound(Rooms({{"fast", 3}, {"slow", 2}}));
  EXPECT_THAT(Relative(stream_.Times("fast", false)), ElementsAre(0, 10, 20))
      << "with waves, fast's second message would wait for slow's answer (200 ms)";
  EXPECT_THAT(Relative(stream_.Times("slow", false)), ElementsAre(0, 200));
  EXPECT_EQ(stream_.most_per_room, 1u) << "never two messages of one room in flight";
  EXPECT_THAT(published_, UnorderedElementsAreArray({1, 2, 3, 4, 5}));
}

TEST_F(RoomSenderStreamTest, MarksFollowTheAnswersInBatchesWithinTheCrashBound) {
  options_.max_in_flight = 4;
  size_t answered_unmarked_most = 0;
  EXPECT_CALL(store_, MarkPublished(kToken, _, _))
      .WillRepeatedly(
          [&](const std::string&, std::span<const int64_t> ids, std::span<const AttemptNote>) {
            size_t answers = 0;
            for (const auto& e : stream_.events) answers += e.answer ? 1 : 0;
            answered_unmarked_most = std::max(answered_unmarked_most, answers - published_.size());
            published_.insert(published_.end(), ids.begin(), ids.end());
            ++mark_published_calls_;
            return core::Result<size_t>(ids.size());
          });
  // Eight rooms of four rows, every answer 10 ms after its send: answers come four at a time.
  SendRound(
      Rooms({{"a", 4}, {"b", 4}, {"c", 4}, {"d", 4}, {"e", 4}, {"f", 4}, {"g", 4}, {"h", 4}}));
  EXPECT_EQ(published_.size(), 32u);
  EXPECT_LT(mark_published_calls_, 32) << "marks are written in batches, not one per answer";
  EXPECT_LE(answered_unmarked_most, options_.max_in_flight)
      << "a kill leaves at most max_in_flight answered messages unmarked (plus those in flight)";
  EXPECT_EQ(stream_.most_in_flight, 4u);
}

TEST_F(RoomSenderStreamTest, AnswersThatTrickleInAreMarkedWithinTheMarkDelay) {
  RecordMarks();
  // One room at a time answers, 100 ms apart: far fewer than max_in_flight answers per batch.
  stream_.latency = [](const core::PublishMessage& m) {
    return milliseconds(100 * (m.envelope.room_id.back() - 'a' + 1));
  };
  std::vector<int64_t> marked_at;
  EXPECT_CALL(store_, MarkPublished(kToken, _, _))
      .WillRepeatedly(
          [&](const std::string&, std::span<const int64_t> ids, std::span<const AttemptNote>) {
            marked_at.push_back(clock_.SteadyMs() - start_);
            published_.insert(published_.end(), ids.begin(), ids.end());
            return core::Result<size_t>(ids.size());
          });
  SendRound(Rooms({{"a", 1}, {"b", 1}, {"c", 1}}));
  ASSERT_EQ(published_.size(), 3u);
  ASSERT_EQ(marked_at.size(), 3u) << "each answer came alone";
  EXPECT_LE(marked_at[0], 100 + kMarkDelay.count()) << "not held until the slowest answer";
  EXPECT_LE(marked_at[1], 200 + kMarkDelay.count());
}

TEST_F(RoomSenderStreamTest, ARoomsGapCountsFromItsLastSendNotFromAWave) {
  RecordMarks();
  pacing_ = RoomPacing(milliseconds(25));
  stream_.latency = [](const core::PublishMessage& m) {
    return milliseconds(m.envelope.room_id == "slow" ? 300 : 5);
  };
  SendRound(Rooms({{"hot", 3}, {"slow", 1}}));
  EXPECT_THAT(Relative(stream_.Times("hot", false)), ElementsAre(0, 25, 50));
  EXPECT_THAT(published_, UnorderedElementsAreArray({1, 2, 3, 4}));
}

TEST_F(RoomSenderStreamTest, ARefusedRoomIsHeldBackAndBacksOffAloneWhileTheOthersGoOn) {
  RecordMarks();
  pacing_ = RoomPacing(milliseconds(25));
  stream_.outcome = [](const core::PublishMessage& m) {
    return m.envelope.room_id == "hot"
               ? FailedWith(core::PublishStatus::kRateLimited, "MsgDropReason MsgFreqCtrl",
                            core::FailureScope::kRoom)
               : Published();
  };
  SendRound(Rooms({{"hot", 3}, {"quiet", 3}}));
  EXPECT_EQ(stream_.Times("hot", false).size(), 1u) << "the refused row's room is held back";
  EXPECT_EQ(stream_.Times("quiet", false).size(), 3u) << "another room goes on";
  EXPECT_EQ(pacing_.GapMs("hot"), 50) << "the refused room's gap doubled";
  EXPECT_EQ(pacing_.GapMs("quiet"), 25);
  EXPECT_EQ(metrics_.room_refusals(), 1u);
  EXPECT_EQ(metrics_.rooms_backed_off(), 1);
  EXPECT_EQ(FailedIds(), std::vector<int64_t>{1});
  EXPECT_EQ(failed_[0].retry_after_ms, 50) << "due again after the room's widened gap, not 1 s";
}

TEST_F(RoomSenderStreamTest, AStopReleasesTheRowsNotSentAndTheMessagesInFlightFinish) {
  RecordMarks();
  stream_.latency = [](const core::PublishMessage&) { return milliseconds(50); };
  clock_.on_sleep = nullptr;
  bool stopped = false;
  stream_.outcome = [&](const core::PublishMessage& m) {
    if (m.envelope.event_id == "evt-2" && !stopped) {
      stopped = true;
      stop_.RequestStop();
    }
    return Published();
  };
  SendRound(Rooms({{"a", 3}, {"b", 3}}));
  // Rows 1 (a) and 4 (b) went first; row 2 went after 1's answer, then the stop came.
  EXPECT_THAT(published_, ::testing::IsSupersetOf({1, 2, 4}));
  EXPECT_EQ(published_.size() + released_.size(), 6u) << "every row marked or released";
  EXPECT_FALSE(released_.empty());
}

}  // namespace
}  // namespace room_outbox::relay
