// The hook's sync-publish breaker: opens after 3 consecutive failures, skips for the cooldown,
// then lets exactly one probe through.
#include <gtest/gtest.h>

#include "sync_breaker.h"

namespace room_outbox::internal {
namespace {

using A = SyncBreaker::Admission;
using T = SyncBreaker::Transition;
using V = SyncBreaker::Verdict;

TEST(SyncBreakerTest, OpensOnTheThirdConsecutiveFailureOnly) {
  SyncBreaker breaker(3, std::chrono::milliseconds(30000));
  EXPECT_EQ(breaker.Record(V::kImFailing, false, 0), T::kNone);
  EXPECT_EQ(breaker.Record(V::kImFailing, false, 1), T::kNone);
  EXPECT_EQ(breaker.Record(V::kHealthy, false, 2), T::kNone);  // resets the count
  EXPECT_EQ(breaker.Record(V::kImFailing, false, 3), T::kNone);
  EXPECT_EQ(breaker.Record(V::kInconclusive, false, 3), T::kNone);  // neither way
  EXPECT_EQ(breaker.Record(V::kImFailing, false, 4), T::kNone);
  EXPECT_EQ(breaker.Admit(5), A::kAllow);
  EXPECT_EQ(breaker.Record(V::kImFailing, false, 5), T::kOpened);
  EXPECT_TRUE(breaker.is_open());
  EXPECT_EQ(breaker.Admit(6), A::kSkip);
  EXPECT_EQ(breaker.Admit(30004), A::kSkip);
}

TEST(SyncBreakerTest, AfterTheCooldownOneProbeDecides) {
  SyncBreaker breaker(3, std::chrono::milliseconds(30000));
  for (int i = 0; i < 3; ++i) breaker.Record(V::kImFailing, false, 0);
  EXPECT_EQ(breaker.Admit(30000), A::kProbe);
  EXPECT_EQ(breaker.Admit(30001), A::kSkip);  // the probe is out
  EXPECT_EQ(breaker.Record(V::kImFailing, true, 30500), T::kReopened);
  EXPECT_EQ(breaker.Admit(60499), A::kSkip);
  EXPECT_EQ(breaker.Admit(60500), A::kProbe);
  breaker.CancelProbe();  // that commit made no request: the next one probes
  EXPECT_EQ(breaker.Admit(60501), A::kProbe);
  EXPECT_EQ(breaker.Record(V::kHealthy, true, 60600), T::kClosed);
  EXPECT_FALSE(breaker.is_open());
  EXPECT_EQ(breaker.Admit(60601), A::kAllow);
}

TEST(SyncBreakerTest, HooksOfOneProcessShareTheBreakerOfTheirImApp) {
  auto a = ProcessSyncBreaker("http://127.0.0.1:1", 1400000001);
  auto b = ProcessSyncBreaker("http://127.0.0.1:1", 1400000001);
  auto other = ProcessSyncBreaker("http://127.0.0.1:2", 1400000001);
  EXPECT_EQ(a.get(), b.get());
  EXPECT_NE(a.get(), other.get());
}

}  // namespace
}  // namespace room_outbox::internal
