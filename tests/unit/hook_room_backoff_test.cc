// The hook's room backoff at its seams (store, publisher, clock): a room refused by IM's
// frequency control (core::FailureScope::kRoom) has its next commits written due for the relay
// without a send, counted as room_refused, the relay woken; another room still sends; the backoff
// ends on the Hook's clock; room refusals never open the sync breaker. Inline through the Hook,
// and the background publisher's own check when a command of a refused room reaches the front
// of its queue.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <future>

#include "background_fixture.h"
#include "hook_fixture.h"
#include "room_backoff.h"
#include "support/wait.h"
#include "support/wake_sink.h"

namespace room_outbox::testing {
namespace {

using std::chrono::milliseconds;
using ::testing::_;
using ::testing::Eq;
using ::testing::Field;
using ::testing::HasSubstr;
using ::testing::Return;
using ::testing::StrictMock;

core::PublishOutcome FreqCtrl() {
  core::PublishOutcome out = FailedWith(core::PublishStatus::kRateLimited,
                                        "dropped by IM: MsgFreqCtrl", core::FailureScope::kRoom);
  out.definite_drop = true;
  out.http_status = 200;
  return out;
}

class HookRoomBackoffTest : public HookFixture {
 protected:
  HookRoomBackoffTest() {
    HookOptions options = DefaultOptions();
    options.wake_socket = wake_.path();
    Build(options);
  }
  ~HookRoomBackoffTest() override { hook_.reset(); }  // before wake_, which its wake-ups reach

  CommitResult CommitGift(const std::string& room, int64_t n) {
    const std::string id = room + "-" + std::to_string(n);
    return hook_->Commit(Command{"cmd-" + id, room, "SendGift", "req", n, "{}"},
                         {Event{"evt-" + id, "RoomGiftSent", n, 0, "{}"}});
  }

  size_t LogLines(const std::string& part) const {
    size_t n = 0;
    for (const std::string& line : logs_) n += line.find(part) != std::string::npos ? 1 : 0;
    return n;
  }

  WakeSink wake_;
};

TEST_F(HookRoomBackoffTest, ARefusedRoomsNextCommitsGoToTheRelayUnsentWhileAnotherRoomSends) {
  ASSERT_TRUE(wake_.bound());
  // The refused message itself: released to the relay, and the relay woken.
  ExpectCommitOfRow(1);
  EXPECT_CALL(*publisher_, Publish(Field(&core::PublishMessage::row_id, 1), _))
      .WillOnce(Return(FreqCtrl()));
  EXPECT_CALL(*store_, Release(_, IdsAre(std::vector<int64_t>{1}))).WillOnce(Return(size_t{1}));
  CommitResult refused = CommitGift("room-hot", 1);
  ASSERT_EQ(refused.status, CommitStatus::kCommitted);
  EXPECT_EQ(refused.events[0].state, DeliveryState::kPending);
  EXPECT_EQ(wake_.Drain(), 1u);

  // Backed off: no Publish, no Release (StrictMocks); the rows are written without a lease.
  for (int64_t n = 2; n <= 4; ++n) {
    ExpectCommitOfRow(n);
    CommitResult held = CommitGift("room-hot", n);
    ASSERT_EQ(held.status, CommitStatus::kCommitted);
    EXPECT_EQ(held.events[0].state, DeliveryState::kPending);
    EXPECT_THAT(held.events[0].error, HasSubstr("frequency control, backed off"));
    EXPECT_TRUE(last_request_.token.empty());
    EXPECT_EQ(last_request_.sync_lease, milliseconds(0));
    EXPECT_EQ(wake_.Drain(), 1u) << "one wake-up per commit that left rows";
  }

  // Another room is not affected.
  ExpectCommitOfRow(10);
  EXPECT_CALL(*publisher_, Publish(Field(&core::PublishMessage::row_id, 10), _))
      .WillOnce(Return(Published()));
  EXPECT_CALL(*store_, MarkPublished(_, IdsAre(std::vector<int64_t>{10})))
      .WillOnce(Return(size_t{1}));
  EXPECT_EQ(CommitGift("room-quiet", 1).events[0].state, DeliveryState::kPublished);
  EXPECT_EQ(wake_.Drain(), 0u);

  const HookMetrics m = hook_->Metrics();
  EXPECT_EQ(m.sync_skipped_room_refused, 3u);
  EXPECT_EQ(m.sync_rate_limited, 1u);
  EXPECT_EQ(m.sync_published, 1u);
  EXPECT_EQ(m.rows_left_to_relay, 4u);
  EXPECT_FALSE(m.sync_breaker_open);
  EXPECT_EQ(LogLines("room backoff open"), 1u) << "one line when it opens, none per command";
  EXPECT_EQ(LogLines("backoff_ms=1000"), 1u);
}

TEST_F(HookRoomBackoffTest, TheBackoffEndsOnTheHooksClockAndADeliveryClearsIt) {
  ExpectCommitOfRow(1);
  EXPECT_CALL(*publisher_, Publish(Field(&core::PublishMessage::row_id, 1), _))
      .WillOnce(Return(FreqCtrl()));
  EXPECT_CALL(*store_, Release(_, _)).WillOnce(Return(size_t{1}));
  CommitGift("room-hot", 1);

  clock_->Advance(milliseconds(999));
  ExpectCommitOfRow(2);
  EXPECT_THAT(CommitGift("room-hot", 2).events[0].error, HasSubstr("backed off"));

  clock_->Advance(milliseconds(1));  // the backoff is over: the next command is sent again
  ExpectCommitOfRow(3);
  EXPECT_CALL(*publisher_, Publish(Field(&core::PublishMessage::row_id, 3), _))
      .WillOnce(Return(FreqCtrl()));
  EXPECT_CALL(*store_, Release(_, _)).WillOnce(Return(size_t{1}));
  CommitGift("room-hot", 3);
  EXPECT_EQ(LogLines("backoff_ms=2000"), 1u) << "refused again: doubled";

  clock_->Advance(milliseconds(2000));
  ExpectCommitOfRow(4);
  EXPECT_CALL(*publisher_, Publish(Field(&core::PublishMessage::row_id, 4), _))
      .WillOnce(Return(Published()));
  EXPECT_CALL(*store_, MarkPublished(_, _)).WillOnce(Return(size_t{1}));
  EXPECT_EQ(CommitGift("room-hot", 4).events[0].state, DeliveryState::kPublished);

  // Delivered: cleared, so the next refusal opens 1 s again and the next command is sent at once.
  ExpectCommitOfRow(5);
  EXPECT_CALL(*publisher_, Publish(Field(&core::PublishMessage::row_id, 5), _))
      .WillOnce(Return(Published()));
  EXPECT_CALL(*store_, MarkPublished(_, _)).WillOnce(Return(size_t{1}));
  EXPECT_EQ(CommitGift("room-hot", 5).events[0].state, DeliveryState::kPublished);
  EXPECT_EQ(hook_->Metrics().sync_skipped_room_refused, 1u);
}

TEST_F(HookRoomBackoffTest, RoomRefusalsNeverOpenTheSyncBreaker) {
  for (int64_t n = 1; n <= 5; ++n) {
    ExpectCommitOfRow(n);
    EXPECT_CALL(*publisher_, Publish(Field(&core::PublishMessage::row_id, n), _))
        .WillOnce(Return(FreqCtrl()));
    EXPECT_CALL(*store_, Release(_, _)).WillOnce(Return(size_t{1}));
    CommitGift("room-" + std::to_string(n), 1);
  }
  EXPECT_FALSE(breaker_->is_open());
  ExpectCommitOfRow(6);
  EXPECT_CALL(*publisher_, Publish(Field(&core::PublishMessage::row_id, 6), _))
      .WillOnce(Return(Published()));
  EXPECT_CALL(*store_, MarkPublished(_, _)).WillOnce(Return(size_t{1}));
  EXPECT_EQ(CommitGift("room-6", 1).events[0].state, DeliveryState::kPublished);
}

// The background publisher with the Hook's RoomBackoff: a command of a room refused while it
// waited in the queue is released untried when it reaches the front.
class BackgroundRoomBackoffTest : public BackgroundFixture {
 protected:
  BackgroundRoomBackoffTest() {
    internal::BackgroundPublisher::Options options = DefaultOptions();
    options.room_backoff = &backoff_;
    Start(options);
  }
  uint64_t Wakes() const { return wake_.sent() + wake_.refused(); }
};

TEST_F(BackgroundRoomBackoffTest, ARoomRefusedWhileItsCommandWaitedIsReleasedUntriedAndOthersGoOn) {
  std::promise<void> gate;
  std::shared_future<void> open = gate.get_future().share();
  std::atomic<bool> first_sent{false};
  std::atomic<int> handed_back{0};
  auto count = [&](size_t n) {
    return [&, n](const std::string&, std::span<const int64_t>) {
      ++handed_back;
      return core::Result<size_t>(n);
    };
  };
  // room-2's command is in flight when room-1 is refused (another thread of the process, say):
  // room-1's command behind it must not be sent.
  EXPECT_CALL(*publisher_, Publish(Field(&core::PublishMessage::row_id, 1), _))
      .WillOnce([&](const core::PublishMessage&, milliseconds) {
        first_sent = true;
        open.wait();
        return Published();
      });
  EXPECT_CALL(*store_, MarkPublished(Eq("tok-a"), IdsAre(std::vector<int64_t>{1})))
      .WillOnce(count(1));
  EXPECT_CALL(*store_, Release(Eq("tok-b"), IdsAre(std::vector<int64_t>{2}))).WillOnce(count(1));
  EXPECT_CALL(*publisher_, Publish(Field(&core::PublishMessage::row_id, 3), _))
      .WillOnce(Return(Published()));
  EXPECT_CALL(*store_, MarkPublished(Eq("tok-c"), IdsAre(std::vector<int64_t>{3})))
      .WillOnce(count(1));

  ASSERT_TRUE(Offer(Job("tok-a", "room-2", {1})));
  ASSERT_TRUE(Eventually([&] { return first_sent.load(); }, milliseconds(5000)));
  ASSERT_TRUE(Offer(Job("tok-b", "room-1", {2})));
  ASSERT_TRUE(Offer(Job("tok-c", "room-3", {3})));
  backoff_.Refused("room-1");
  const uint64_t wakes_before = Wakes();
  gate.set_value();
  ASSERT_TRUE(Eventually([&] { return handed_back.load() == 3; }, milliseconds(5000)));
  background_.reset();

  const HookMetrics m = counters_.Snapshot();
  EXPECT_EQ(m.sync_skipped_room_refused, 1u);
  EXPECT_EQ(m.sync_published, 2u);
  EXPECT_EQ(m.rows_left_to_relay, 1u);
  EXPECT_EQ(Wakes(), wakes_before + 1) << "the relay is woken for the released row";
}

TEST_F(BackgroundRoomBackoffTest, ARefusalAnsweredToTheThreadBacksTheRoomOff) {
  std::atomic<bool> released{false};
  EXPECT_CALL(*publisher_, Publish(Field(&core::PublishMessage::row_id, 1), _))
      .WillOnce(Return(FreqCtrl()));
  EXPECT_CALL(*store_, Release(Eq("tok-a"), IdsAre(std::vector<int64_t>{1})))
      .WillOnce([&](const std::string&, std::span<const int64_t>) {
        released = true;
        return core::Result<size_t>(1);
      });
  ASSERT_TRUE(Offer(Job("tok-a", "room-1", {1})));
  ASSERT_TRUE(Eventually([&] { return released.load(); }, milliseconds(5000)));
  EXPECT_TRUE(backoff_.BackedOff("room-1"));
  EXPECT_FALSE(backoff_.BackedOff("room-2"));
  background_.reset();
  EXPECT_GE(Wakes(), 1u);
}

}  // namespace
}  // namespace room_outbox::testing
