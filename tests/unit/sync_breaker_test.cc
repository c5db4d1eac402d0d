// The IM breaker at the hook's sync-publish scope: opens after 3 consecutive failures, skips for
// the cooldown, then lets exactly one probe through; failures of publishes under way when it
// opened do not push the cooldown out.
#include "sync_breaker.h"

#include <gtest/gtest.h>

namespace room_outbox::internal {
namespace {

using A = core::ImBreaker::Admission;
using T = core::BreakerTransition;
using V = core::ImBreaker::Verdict;

constexpr std::chrono::milliseconds kNoMinimum{0};

TEST(SyncBreakerTest, TheSyncScopeOpensAfterThreeFailuresFor30Seconds) {
  EXPECT_EQ(MakeSyncBreaker()->failures_to_open(), 3);
  EXPECT_EQ(MakeSyncBreaker()->cooldown(), std::chrono::milliseconds(30000));
}

TEST(SyncBreakerTest, OpensOnTheThirdConsecutiveFailureOnly) {
  core::ImBreaker breaker(kSyncBreakerSettings);
  EXPECT_EQ(breaker.Record(V::kFailure, false, kNoMinimum, 0), T::kNone);
  EXPECT_EQ(breaker.Record(V::kFailure, false, kNoMinimum, 1), T::kNone);
  EXPECT_EQ(breaker.Record(V::kHealthy, false, kNoMinimum, 2), T::kNone);  // resets the count
  EXPECT_EQ(breaker.Record(V::kFailure, false, kNoMinimum, 3), T::kNone);
  EXPECT_EQ(breaker.Record(V::kInconclusive, false, kNoMinimum, 3), T::kNone);  // neither way
  EXPECT_EQ(breaker.Record(V::kFailure, false, kNoMinimum, 4), T::kNone);
  EXPECT_EQ(breaker.Admit(5), A::kAllow);
  EXPECT_EQ(breaker.Record(V::kFailure, false, kNoMinimum, 5), T::kOpened);
  EXPECT_TRUE(breaker.is_open());
  EXPECT_EQ(breaker.Admit(6), A::kReject);
  EXPECT_EQ(breaker.Admit(30004), A::kReject);
}

TEST(SyncBreakerTest, AfterTheCooldownOneProbeDecides) {
  core::ImBreaker breaker(kSyncBreakerSettings);
  for (int i = 0; i < 3; ++i) breaker.Record(V::kFailure, false, kNoMinimum, 0);
  EXPECT_EQ(breaker.Admit(30000), A::kProbe);
  EXPECT_EQ(breaker.Admit(30001), A::kReject);  // the probe is out
  EXPECT_EQ(breaker.Record(V::kFailure, true, kNoMinimum, 30500), T::kReopened);
  EXPECT_EQ(breaker.Admit(60499), A::kReject);
  EXPECT_EQ(breaker.Admit(60500), A::kProbe);
  breaker.CancelProbe();  // that commit made no request: the next one probes
  EXPECT_EQ(breaker.Admit(60501), A::kProbe);
  EXPECT_EQ(breaker.Record(V::kHealthy, true, kNoMinimum, 60600), T::kClosed);
  EXPECT_FALSE(breaker.is_open());
  EXPECT_EQ(breaker.Admit(60601), A::kAllow);
}

TEST(SyncBreakerTest, FailuresOfPublishesUnderWayWhenItOpenedDoNotPushTheCooldownOut) {
  core::ImBreaker breaker(kSyncBreakerSettings);
  for (int i = 0; i < 3; ++i) breaker.Record(V::kFailure, false, kNoMinimum, 0);
  EXPECT_EQ(breaker.Record(V::kFailure, false, kNoMinimum, 20000), T::kNone);
  EXPECT_EQ(breaker.reopens_at_ms(), 30000);
  EXPECT_EQ(breaker.Admit(30000), A::kProbe);
}

TEST(SyncBreakerTest, HooksOfOneProcessShareTheBreakerOfTheirImApp) {
  auto a = ProcessSyncBreaker("http://127.0.0.1:1", 1400000001);
  auto b = ProcessSyncBreaker("http://127.0.0.1:1", 1400000001);
  auto other = ProcessSyncBreaker("http://127.0.0.1:2", 1400000001);
  EXPECT_EQ(a.get(), b.get());
  EXPECT_NE(a.get(), other.get());
  EXPECT_EQ(a->failures_to_open(), 3);
}

}  // namespace
}  // namespace room_outbox::internal
