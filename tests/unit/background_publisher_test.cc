// BackgroundPublisher at its seams: the per-room order rule at Offer, a failure releasing the
// room's later queued rows untried, the queue bound, and shutdown handing rows back.
#include "background_publisher.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <future>

#include "background_fixture.h"
#include "support/wait.h"

namespace room_outbox::testing {
namespace {

using internal::BackgroundJob;
using internal::RoomView;
using std::chrono::milliseconds;
using ::testing::_;
using ::testing::Eq;
using ::testing::Return;

core::PublishOutcome Delivered() {
  core::PublishOutcome o;
  o.status = core::PublishStatus::kPublished;
  o.scope = core::FailureScope::kNone;
  return o;
}

core::PublishOutcome Failed() {
  core::PublishOutcome o;
  o.status = core::PublishStatus::kRetryable;
  o.scope = core::FailureScope::kRow;
  o.error = "im error 10002: internal error";
  return o;
}

class BackgroundPublisherTest : public BackgroundFixture {
 protected:
  void Start(size_t capacity = 8) { BackgroundFixture::Start(DefaultOptions(capacity)); }
};

TEST_F(BackgroundPublisherTest, RowsBehindAnEarlierPendingRowThatIsNotTheQueuesAreRefused) {
  Start();
  EXPECT_FALSE(Offer(Job("tok-a", "room-1", {1}), /*earlier_pending=*/true));
  background_.reset();  // nothing was published or handed back
}

TEST_F(BackgroundPublisherTest, AFailureReleasesTheRoomsLaterQueuedRowsUntriedAndOthersGoOn) {
  Start();
  std::promise<void> gate;
  std::shared_future<void> open = gate.get_future().share();
  std::atomic<bool> first_sent{false};
  std::atomic<bool> other_marked{false};
  EXPECT_CALL(*publisher_, Publish(::testing::Field(&core::PublishMessage::row_id, 1), _))
      .WillOnce([&](const core::PublishMessage&, milliseconds) {
        first_sent = true;
        open.wait();
        return Failed();
      });
  EXPECT_CALL(*publisher_, Publish(::testing::Field(&core::PublishMessage::row_id, 4), _))
      .WillOnce(Return(Delivered()));
  EXPECT_CALL(*store_, Release(Eq("tok-a"), IdsAre(std::vector<int64_t>{1})))
      .WillOnce(Return(core::Result<size_t>(1)));
  EXPECT_CALL(*store_, Release(Eq("tok-b"), IdsAre(std::vector<int64_t>{2, 3})))
      .WillOnce(Return(core::Result<size_t>(2)));
  EXPECT_CALL(*store_, MarkPublished(Eq("tok-c"), IdsAre(std::vector<int64_t>{4})))
      .WillOnce([&](const std::string&, std::span<const int64_t>) {
        other_marked = true;
        return core::Result<size_t>(1);
      });

  ASSERT_TRUE(Offer(Job("tok-a", "room-1", {1}), false));
  ASSERT_TRUE(Eventually([&] { return first_sent.load(); }, milliseconds(5000)));
  // room-1's earlier pending row is the queue's own: its next command follows it.
  const RoomView before = background_->View("room-1");
  EXPECT_TRUE(before.queued);
  ASSERT_TRUE(Offer(Job("tok-b", "room-1", {2, 3}), true));
  ASSERT_TRUE(Offer(Job("tok-c", "room-2", {4}), false));
  gate.set_value();
  ASSERT_TRUE(Eventually([&] { return other_marked.load(); }, milliseconds(5000)));
  // A view taken before the release no longer lets room-1's rows in behind the released ones.
  ASSERT_TRUE(background_->Reserve());
  EXPECT_FALSE(background_->Offer(Job("tok-d", "room-1", {5}), before, true));
  background_.reset();
}

TEST_F(BackgroundPublisherTest, TheQueueHoldsAtMostItsCapacityAndShutdownReleasesWhatIsLeft) {
  Start(/*capacity=*/1);
  std::promise<void> gate;
  std::shared_future<void> open = gate.get_future().share();
  std::atomic<bool> first_sent{false};
  EXPECT_CALL(*publisher_, Publish(::testing::Field(&core::PublishMessage::row_id, 1), _))
      .WillOnce([&](const core::PublishMessage&, milliseconds) {
        first_sent = true;
        open.wait();
        return Delivered();
      });
  EXPECT_CALL(*store_, MarkPublished(Eq("tok-a"), IdsAre(std::vector<int64_t>{1})))
      .WillOnce(Return(core::Result<size_t>(1)));
  ASSERT_TRUE(Offer(Job("tok-a", "room-1", {1}), false));
  ASSERT_TRUE(Eventually([&] { return first_sent.load(); }, milliseconds(5000)));
  ASSERT_TRUE(Offer(Job("tok-b", "room-2", {2}), false));
  EXPECT_FALSE(background_->Reserve()) << "one command waiting fills a queue of 1";
  // tok-b's deadline is still 2 s away: on shutdown it is published as usual, not dropped.
  EXPECT_CALL(*publisher_, Publish(::testing::Field(&core::PublishMessage::row_id, 2), _))
      .WillOnce(Return(Failed()));
  EXPECT_CALL(*store_, Release(Eq("tok-b"), IdsAre(std::vector<int64_t>{2})))
      .WillOnce(Return(core::Result<size_t>(1)));
  gate.set_value();
  background_.reset();
}

TEST_F(BackgroundPublisherTest, EachRowGetsWhatIsLeftOfItsCommandsTime) {
  Start();
  std::atomic<bool> marked{false};
  BackgroundJob job = Job("tok-a", "room-1", {1});
  clock_.Advance(milliseconds(1500));  // the command waited in the queue
  EXPECT_CALL(*publisher_,
              Publish(::testing::Field(&core::PublishMessage::row_id, 1), Eq(milliseconds(500))))
      .WillOnce(Return(Delivered()));
  EXPECT_CALL(*store_, MarkPublished(Eq("tok-a"), IdsAre(std::vector<int64_t>{1})))
      .WillOnce([&](const std::string&, std::span<const int64_t>) {
        marked = true;
        return core::Result<size_t>(1);
      });
  ASSERT_TRUE(Offer(std::move(job), false));
  ASSERT_TRUE(Eventually([&] { return marked.load(); }, milliseconds(5000)));
  background_.reset();
}

TEST_F(BackgroundPublisherTest, ACommandPastItsDeadlineIsReleasedUntried) {
  Start();
  std::atomic<bool> released{false};
  BackgroundJob job = Job("tok-a", "room-1", {1, 2});
  clock_.Advance(milliseconds(2000));  // its lease would end before a publish could
  // No Publish (a StrictMock fails on one): both rows go back to the relay unattempted.
  EXPECT_CALL(*store_, Release(Eq("tok-a"), IdsAre(std::vector<int64_t>{1, 2})))
      .WillOnce([&](const std::string&, std::span<const int64_t>) {
        released = true;
        return core::Result<size_t>(2);
      });
  ASSERT_TRUE(Offer(std::move(job), false));
  ASSERT_TRUE(Eventually([&] { return released.load(); }, milliseconds(5000)));
  background_.reset();
}

}  // namespace
}  // namespace room_outbox::testing
