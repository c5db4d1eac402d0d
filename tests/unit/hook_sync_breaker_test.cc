// The hook with its sync breaker (sync_breaker.h): open, a commit makes no request and writes
// its rows due for the relay at once; three failing sync publishes open it; the body-size check.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "hook_fixture.h"

namespace room_outbox::testing {
namespace {

using ::testing::_;
using ::testing::HasSubstr;
using ::testing::Return;

class HookSyncBreakerTest : public HookFixture {
 protected:
  HookSyncBreakerTest() {
    HookOptions options = DefaultOptions();
    options.tencent_im.max_body_bytes = 1000;
    Build(options);
  }

  CommitResult CommitOne(int64_t n, const std::string& payload = "{}") {
    const std::string id = std::to_string(n);
    return hook_->Commit(Command{"cmd-" + id, "room-" + id, "SendGift", "req", 1, "{}"},
                         {Event{"evt-" + id, "RoomGiftSent", 1, 0, payload}});
  }
};

TEST_F(HookSyncBreakerTest, ThreeFailingSyncPublishesOpenItAndThenCommitsMakeNoRequest) {
  for (int64_t n = 1; n <= 3; ++n) {
    ExpectCommitOfRow(n);
    EXPECT_CALL(*publisher_, Publish(_, _))
        .WillOnce(Return(FailedWith(core::PublishStatus::kUnknown, "timeout after 250ms")));
    EXPECT_CALL(*store_, Release(_, _)).WillOnce(Return(size_t{1}));
    EXPECT_EQ(CommitOne(n).status, CommitStatus::kCommitted);
  }
  EXPECT_TRUE(breaker_->is_open());

  // Open: no Publish, no Release (a StrictMock fails on either); the rows carry no lease.
  ExpectCommitOfRow(4);
  CommitResult result = CommitOne(4);
  ASSERT_EQ(result.status, CommitStatus::kCommitted);
  EXPECT_EQ(result.events[0].state, DeliveryState::kPending);
  EXPECT_EQ(result.events[0].error, "sync publish skipped: IM failing, breaker open");
  EXPECT_TRUE(last_request_.token.empty());
  EXPECT_EQ(last_request_.sync_lease, std::chrono::milliseconds(0));
}

TEST_F(HookSyncBreakerTest, AnswersAboutTheMessageDoNotCountAsImFailing) {
  core::PublishOutcome group_gone = FailedWith(core::PublishStatus::kPermanent, "im error 10010");
  for (int64_t n = 1; n <= 4; ++n) {
    ExpectCommitOfRow(n);
    EXPECT_CALL(*publisher_, Publish(_, _)).WillOnce(Return(group_gone));
    EXPECT_CALL(*store_, Release(_, _)).WillOnce(Return(size_t{1}));
    CommitOne(n);
  }
  EXPECT_FALSE(breaker_->is_open());
}

TEST_F(HookSyncBreakerTest, ABodyOverMaxBodyBytesIsRefusedBeforeAnyWrite) {
  CommitResult result = CommitOne(1, R"({"text":")" + std::string(2000, 'x') + R"("})");
  EXPECT_EQ(result.status, CommitStatus::kFailed);
  EXPECT_EQ(result.error.code, ErrorCode::kInvalidArgument);
  EXPECT_THAT(result.error.message, HasSubstr("evt-1"));
  EXPECT_THAT(result.error.message, HasSubstr("max_body_bytes 1000"));
}

}  // namespace
}  // namespace room_outbox::testing
