#include "worker/retry_policy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "mock_publisher.h"

namespace room_outbox::relay {
namespace {

using ::room_outbox::testing::FailedWith;
using ::room_outbox::testing::Published;
using ::room_outbox::testing::Skipped;
using std::chrono::milliseconds;
using ::testing::EndsWith;
using ::testing::StartsWith;

TEST(RetryPolicyTest, DeliveredOutcomesAreNotRetried) {
  RetryPolicy policy(milliseconds(1000), milliseconds(1000));
  for (const core::PublishOutcome& outcome : {Published(), Skipped()}) {
    AttemptVerdict v = policy.Judge(outcome);
    EXPECT_TRUE(v.delivered);
    EXPECT_EQ(v.error, "");
    EXPECT_EQ(v.level, spdlog::level::debug);
  }
}

TEST(RetryPolicyTest, FailuresAreDueAgainAfterThePollInterval) {
  RetryPolicy policy(milliseconds(200), milliseconds(1000));
  AttemptVerdict v = policy.Judge(FailedWith(core::PublishStatus::kRetryable, "http 502"));
  EXPECT_FALSE(v.delivered);
  EXPECT_EQ(v.error, "retryable: http 502");
  EXPECT_EQ(v.retry_after, milliseconds(200));
  EXPECT_EQ(v.level, spdlog::level::warn);
  EXPECT_EQ(policy.Judge(FailedWith(core::PublishStatus::kUnknown, "")).error, "unknown");
}

TEST(RetryPolicyTest, PermanentFailuresAreRetriedAllTheSameButLoggedAsErrors) {
  RetryPolicy policy(milliseconds(1000), milliseconds(1000));
  AttemptVerdict v = policy.Judge(FailedWith(core::PublishStatus::kPermanent, "im error 10010"));
  EXPECT_EQ(v.retry_after, milliseconds(1000));
  EXPECT_EQ(v.level, spdlog::level::err);
}

TEST(RetryPolicyTest, RateLimitedRowsWaitAtLeastTheFrequencyWindow) {
  EXPECT_EQ(RetryPolicy(milliseconds(200), milliseconds(1000))
                .Judge(FailedWith(core::PublishStatus::kRateLimited, "im error 10023"))
                .retry_after,
            milliseconds(1000));
  EXPECT_EQ(RetryPolicy(milliseconds(5000), milliseconds(1000))
                .RetryAfter(FailedWith(core::PublishStatus::kRateLimited, "im error 10023")),
            milliseconds(5000));
}

TEST(RetryPolicyTest, RoomScopedRefusalsWaitTheFrequencyWindowAndDropsAreNoted) {
  core::PublishOutcome dropped =
      FailedWith(core::PublishStatus::kRateLimited, "MsgDropReason: MsgFreqCtrl");
  dropped.scope = core::FailureScope::kRoom;
  dropped.definite_drop = true;
  AttemptVerdict v = RetryPolicy(milliseconds(200), milliseconds(1000)).Judge(dropped);
  EXPECT_EQ(v.retry_after, milliseconds(1000));
  EXPECT_TRUE(v.dropped);
  core::PublishOutcome unknown = FailedWith(core::PublishStatus::kUnknown, "timeout after 3000ms");
  EXPECT_FALSE(RetryPolicy(milliseconds(200), milliseconds(1000)).Judge(unknown).dropped);
}

TEST(RetryPolicyTest, UndecodableEnvelopesAreFailedAttemptsWithTheirReason) {
  AttemptVerdict v = RetryPolicy(milliseconds(1000), milliseconds(1000)).Undecodable("not json");
  EXPECT_FALSE(v.delivered);
  EXPECT_EQ(v.error, "undecodable envelope: not json");
  EXPECT_EQ(v.retry_after, milliseconds(1000));
  EXPECT_EQ(v.level, spdlog::level::err);
}

TEST(RetryPolicyTest, ShortErrorCutsOnAUtf8Boundary) {
  EXPECT_EQ(ShortError("short"), "short");
  std::string text(199, 'x');
  text += "\xe4\xbd\xa0\xe5\xa5\xbd";  // two 3-byte characters across the 200-byte cut
  const std::string cut = ShortError(text);
  EXPECT_EQ(cut, std::string(199, 'x') + "...");
  EXPECT_THAT(ShortError(std::string(5000, 'y')), EndsWith("..."));
  EXPECT_THAT(ShortError(std::string(5000, 'y')), StartsWith("yyy"));
}

}  // namespace
}  // namespace room_outbox::relay
