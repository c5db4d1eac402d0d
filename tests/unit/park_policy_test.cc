#include "worker/park_policy.h"

#include <gtest/gtest.h>

#include "mock_publisher.h"

namespace room_outbox::relay {
namespace {

using ::room_outbox::testing::FailedWith;
using ::room_outbox::testing::Published;

TEST(ParkPolicyTest, ZeroNeverParksThePermanentFailureOfAnyAttempt) {
  const ParkPolicy never(0);
  EXPECT_FALSE(never.enabled());
  for (int64_t retry_count : {0, 1, 2, 100, 1'000'000}) {
    EXPECT_EQ(never.Decide(retry_count, true), ParkDecision::kRetry) << retry_count;
  }
  // A negative setting cannot come from the config; it means never all the same.
  EXPECT_EQ(ParkPolicy(-3).Decide(10, true), ParkDecision::kRetry);
  EXPECT_EQ(ParkPolicy(-3).after(), 0);
}

TEST(ParkPolicyTest, ParksAtTheNthAttemptCountingTheOnesBefore) {
  const ParkPolicy three(3);
  EXPECT_TRUE(three.enabled());
  EXPECT_EQ(three.after(), 3);
  // retry_count is what the claim read: the failures recorded before this attempt.
  EXPECT_EQ(three.Decide(0, true), ParkDecision::kRetry);  // attempt 1
  EXPECT_EQ(three.Decide(1, true), ParkDecision::kRetry);  // attempt 2
  EXPECT_EQ(three.Decide(2, true), ParkDecision::kPark);   // attempt 3
  // Rows that failed more often (e.g. before the setting was raised) park at once.
  EXPECT_EQ(three.Decide(7, true), ParkDecision::kPark);
  EXPECT_EQ(three.Decide(-1, true), ParkDecision::kRetry);
}

TEST(ParkPolicyTest, OneParksAtTheFirstPermanentFailure) {
  EXPECT_EQ(ParkPolicy(1).Decide(0, true), ParkDecision::kPark);
}

TEST(ParkPolicyTest, TransientFailuresNeverPark) {
  const ParkPolicy three(3);
  for (int64_t retry_count : {0, 2, 3, 50}) {
    EXPECT_EQ(three.Decide(retry_count, false), ParkDecision::kRetry) << retry_count;
  }
}

TEST(ParkPolicyTest, OnlyTheUndeliverableRowScopeIsPermanent) {
  EXPECT_TRUE(ParkPolicy::IsPermanent(
      FailedWith(core::PublishStatus::kPermanent, "im error 10010: group dissolved")));
  EXPECT_TRUE(ParkPolicy::IsPermanent(FailedWith(core::PublishStatus::kPermanent,
                                                 "cannot build IM request: body too large",
                                                 core::FailureScope::kUndeliverableRow)));
  // A permanent status whose scope is the whole app (bad key, 70050): the breaker's business,
  // never the row's.
  EXPECT_FALSE(ParkPolicy::IsPermanent(FailedWith(
      core::PublishStatus::kPermanent, "im error 70009: bad sig", core::FailureScope::kApp)));
  EXPECT_FALSE(ParkPolicy::IsPermanent(FailedWith(core::PublishStatus::kRetryable, "http 502")));
  EXPECT_FALSE(ParkPolicy::IsPermanent(FailedWith(core::PublishStatus::kUnknown, "timeout")));
  EXPECT_FALSE(ParkPolicy::IsPermanent(
      FailedWith(core::PublishStatus::kRateLimited, "10023", core::FailureScope::kRoom)));
  EXPECT_FALSE(
      ParkPolicy::IsPermanent(FailedWith(core::PublishStatus::kNotAttempted, "breaker open")));
  EXPECT_FALSE(ParkPolicy::IsPermanent(Published()));
}

}  // namespace
}  // namespace room_outbox::relay
