// Marks the hook could not write, at its seams (store, publisher, clock): a sync publish that IM
// took and whose mark failed is marked by the next Commit before its transaction, with the
// earlier command's token, one attempt that never fails that Commit; a Hook closing writes what
// still waits; the background thread writes them on its own after 1 s, doubling on failures.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <string>
#include <vector>

#include "background_fixture.h"
#include "hook_fixture.h"
#include "late_marks.h"
#include "support/wait.h"

namespace room_outbox::testing {
namespace {

using std::chrono::milliseconds;
using ::testing::_;
using ::testing::Eq;
using ::testing::Field;
using ::testing::InSequence;
using ::testing::Return;
using ::testing::StrictMock;

class HookLateMarksTest : public HookFixture {
 protected:
  HookLateMarksTest() { Build(DefaultOptions()); }

  void ExpectPublished(int64_t id) {
    EXPECT_CALL(*publisher_, Publish(Field(&core::PublishMessage::row_id, id), _))
        .WillOnce(Return(Published()));
  }
  // The mark of `id`, under the token its own commit wrote.
  auto MarkOf(int64_t id) {
    return ::testing::Truly([this, id](const std::string& token) { return token == tokens_[id]; });
  }

  CommitResult CommitGift(int64_t n) {
    const std::string id = std::to_string(n);
    return hook_->Commit(Command{"cmd-" + id, "room-1", "SendGift", "req", n, "{}"},
                         {Event{"evt-" + id, "RoomGiftSent", n, 0, "{}"}});
  }
};

TEST_F(HookLateMarksTest, AFailedMarkIsWrittenBeforeTheNextCommitsTransactionWithItsOwnToken) {
  ExpectCommitOfRow(1);
  ExpectPublished(1);
  EXPECT_CALL(*store_, MarkPublished(MarkOf(1), IdsAre(std::vector<int64_t>{1})))
      .WillOnce(Return(LostMark()));
  CommitResult first = CommitGift(1);
  ASSERT_EQ(first.status, CommitStatus::kCommitted);
  EXPECT_EQ(first.events[0].state, DeliveryState::kPublished);
  EXPECT_EQ(hook_->Metrics().late_marks_waiting, 1u);

  {
    InSequence order;
    EXPECT_CALL(*store_, MarkPublished(MarkOf(1), IdsAre(std::vector<int64_t>{1})))
        .WillOnce(Return(size_t{1}));
    ExpectCommitOfRow(2);
    ExpectPublished(2);
    EXPECT_CALL(*store_, MarkPublished(MarkOf(2), IdsAre(std::vector<int64_t>{2})))
        .WillOnce(Return(size_t{1}));
  }
  EXPECT_EQ(CommitGift(2).status, CommitStatus::kCommitted);

  const HookMetrics m = hook_->Metrics();
  EXPECT_EQ(m.late_marks_waiting, 0u);
  EXPECT_EQ(m.late_marks_written, 1u);
  EXPECT_EQ(m.sync_published, 2u) << "no second request for row 1";
}

TEST_F(HookLateMarksTest, ALateWriteThatFailsIsTriedOnceAndNeverFailsTheCommit) {
  ExpectCommitOfRow(1);
  ExpectPublished(1);
  EXPECT_CALL(*store_, MarkPublished(MarkOf(1), _)).WillOnce(Return(LostMark()));
  CommitGift(1);

  {
    InSequence order;
    EXPECT_CALL(*store_, MarkPublished(MarkOf(1), _)).WillOnce(Return(LostMark()));  // once only
    ExpectCommitOfRow(2);
    ExpectPublished(2);
    EXPECT_CALL(*store_, MarkPublished(MarkOf(2), _)).WillOnce(Return(size_t{1}));
  }
  CommitResult second = CommitGift(2);
  EXPECT_EQ(second.status, CommitStatus::kCommitted);
  EXPECT_EQ(second.events[0].state, DeliveryState::kPublished);
  EXPECT_EQ(hook_->Metrics().late_marks_waiting, 1u);

  {
    InSequence order;
    EXPECT_CALL(*store_, MarkPublished(MarkOf(1), _)).WillOnce(Return(size_t{1}));
    ExpectCommitOfRow(3);
    ExpectPublished(3);
    EXPECT_CALL(*store_, MarkPublished(MarkOf(3), _)).WillOnce(Return(size_t{1}));
  }
  CommitGift(3);
  EXPECT_EQ(hook_->Metrics().late_marks_written, 1u);
  EXPECT_EQ(hook_->Metrics().late_marks_waiting, 0u);
}

TEST_F(HookLateMarksTest, AMarkARelayTookOverCountsAsNothingWritten) {
  ExpectCommitOfRow(1);
  ExpectPublished(1);
  EXPECT_CALL(*store_, MarkPublished(MarkOf(1), _)).WillOnce(Return(LostMark()));
  CommitGift(1);
  {
    InSequence order;
    // The lease ran out meanwhile and a relay holds the row under its own token.
    EXPECT_CALL(*store_, MarkPublished(MarkOf(1), _)).WillOnce(Return(size_t{0}));
    ExpectCommitOfRow(2);
    ExpectPublished(2);
    EXPECT_CALL(*store_, MarkPublished(MarkOf(2), _)).WillOnce(Return(size_t{1}));
  }
  CommitGift(2);
  EXPECT_EQ(hook_->Metrics().late_marks_written, 0u);
  EXPECT_EQ(hook_->Metrics().late_marks_waiting, 0u);
}

TEST_F(HookLateMarksTest, AHookClosingWritesTheMarksStillWaitingOnce) {
  ExpectCommitOfRow(1);
  ExpectPublished(1);
  EXPECT_CALL(*store_, MarkPublished(MarkOf(1), _)).WillOnce(Return(LostMark()));
  CommitGift(1);
  EXPECT_CALL(*store_, MarkPublished(MarkOf(1), IdsAre(std::vector<int64_t>{1})))
      .WillOnce(Return(size_t{1}));
  hook_.reset();  // the store double checks its expectations as the Hook destroys it
}

// The background publisher with the Hook's LateMarks: its own failed mark is written by its
// thread once LateMarks::kFirstRetry has passed on its clock, then after 2 s when that fails.
class BackgroundLateMarksTest : public BackgroundFixture {
 protected:
  BackgroundLateMarksTest() {
    internal::BackgroundPublisher::Options options = DefaultOptions();
    options.late_marks = &late_;
    Start(options);
  }

  // Offers a job whose row is published and marked; returns once its mark was made.
  void PublishOne(const std::string& token, int64_t id) {
    std::atomic<bool> marked{false};
    EXPECT_CALL(*publisher_, Publish(Field(&core::PublishMessage::row_id, id), _))
        .WillOnce(Return(Published()));
    EXPECT_CALL(*store_, MarkPublished(Eq(token), IdsAre(std::vector<int64_t>{id})))
        .WillOnce([&](const std::string&, std::span<const int64_t>) {
          marked = true;
          return core::Result<size_t>(1);
        });
    ASSERT_TRUE(Offer(Job(token, "room-" + std::to_string(id), {id})));
    ASSERT_TRUE(Eventually([&] { return marked.load(); }, milliseconds(5000)));
  }
};

TEST_F(BackgroundLateMarksTest, ItsThreadWritesAFailedMarkAfterOneSecondThenAfterTwoOnAFailure) {
  std::atomic<int> late_tries{0};
  std::atomic<bool> first_failed{false};
  EXPECT_CALL(*publisher_, Publish(Field(&core::PublishMessage::row_id, 1), _))
      .WillOnce(Return(Published()));
  // The mark after the publish, then the late tries: fail, succeed.
  EXPECT_CALL(*store_, MarkPublished(Eq("tok-a"), IdsAre(std::vector<int64_t>{1})))
      .WillOnce([&](const std::string&, std::span<const int64_t>) {
        first_failed = true;
        return LostMark();
      })
      .WillOnce([&](const std::string&, std::span<const int64_t>) {
        ++late_tries;
        return LostMark();
      })
      .WillOnce([&](const std::string&, std::span<const int64_t>) {
        ++late_tries;
        return core::Result<size_t>(1);
      });
  ASSERT_TRUE(Offer(Job("tok-a", "room-1", {1})));
  ASSERT_TRUE(Eventually([&] { return first_failed.load(); }, milliseconds(5000)));
  ASSERT_TRUE(Eventually([&] { return late_.waiting() == 1; }, milliseconds(5000)));

  // Not yet due: a command published meanwhile does not bring the late write forward.
  clock_.Advance(milliseconds(999));
  PublishOne("tok-b", 2);
  EXPECT_EQ(late_tries.load(), 0);
  // Due: the thread tries (it fails), without another command.
  clock_.Advance(milliseconds(1));
  ASSERT_TRUE(Eventually([&] { return late_tries.load() == 1; }, milliseconds(5000)));
  // The next try is 2 s later.
  clock_.Advance(milliseconds(1999));
  PublishOne("tok-c", 3);
  EXPECT_EQ(late_tries.load(), 1);
  clock_.Advance(milliseconds(1));
  ASSERT_TRUE(Eventually([&] { return late_tries.load() == 2; }, milliseconds(5000)));
  ASSERT_TRUE(Eventually([&] { return late_.empty(); }, milliseconds(5000)));
  EXPECT_EQ(counters_.Snapshot().late_marks_written, 1u);
  EXPECT_EQ(counters_.Snapshot().sync_published, 3u) << "row 1 was sent once";
  background_.reset();
}

}  // namespace
}  // namespace room_outbox::testing
