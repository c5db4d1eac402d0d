#include "core/tencent/rate_budget.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "fake_clock.h"

namespace room_outbox {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;

class RateBudgetTest : public ::testing::Test {
 protected:
  testing::FakeClock clock_;

  // Takes tokens until the bucket says wait; returns how many were taken.
  int Drain(core::RateBudget& budget) {
    int taken = 0;
    while (budget.TryAcquire() == microseconds::zero()) {
      ++taken;
    }
    return taken;
  }
};

TEST_F(RateBudgetTest, StartsWithHundredMillisecondsOfBurst) {
  core::RateBudget budget(200, clock_);
  EXPECT_EQ(Drain(budget), 20);
  core::RateBudget slow(5, clock_);
  EXPECT_EQ(Drain(slow), 1) << "at least one token";
}

TEST_F(RateBudgetTest, WaitIsTimeToNextToken) {
  core::RateBudget budget(10, clock_);
  ASSERT_EQ(budget.TryAcquire(), microseconds::zero());
  EXPECT_EQ(budget.TryAcquire(), microseconds(100'000));
  clock_.Advance(milliseconds(40));
  EXPECT_NEAR(budget.TryAcquire().count(), 60'000, 1);
  clock_.Advance(milliseconds(60));
  EXPECT_EQ(budget.TryAcquire(), microseconds::zero());
}

TEST_F(RateBudgetTest, TimeUntilIsTheWaitForSeveralTokensAtMostAFullBucket) {
  core::RateBudget budget(200, clock_);  // a bucket of 20, one token per 5ms
  EXPECT_EQ(budget.TimeUntil(20), microseconds::zero());
  Drain(budget);
  EXPECT_EQ(budget.TimeUntil(1), microseconds(5'000));
  EXPECT_EQ(budget.TimeUntil(4), microseconds(20'000));
  EXPECT_EQ(budget.TimeUntil(500), microseconds(100'000)) << "a full bucket";
  clock_.Advance(milliseconds(20));
  EXPECT_EQ(budget.TimeUntil(4), microseconds::zero());
  EXPECT_EQ(Drain(budget), 4) << "TimeUntil took nothing";
}

TEST_F(RateBudgetTest, KeepsToRateOverOneSecond) {
  core::RateBudget budget(50, clock_);
  int sent = 0;
  // Step 1ms at a time through one second, taking every token offered.
  for (int ms = 0; ms < 1000; ++ms) {
    sent += Drain(budget);
    clock_.Advance(milliseconds(1));
  }
  // 5 burst + 50 refilled in the second.
  EXPECT_GE(sent, 53);
  EXPECT_LE(sent, 55);
}

TEST_F(RateBudgetTest, RateLimitHalvesRateWithFloorOfOne) {
  core::RateBudget budget(8, clock_);
  budget.OnRateLimited();
  EXPECT_DOUBLE_EQ(budget.effective_rate(), 4);
  clock_.Advance(std::chrono::seconds(1));
  budget.OnRateLimited();
  EXPECT_DOUBLE_EQ(budget.effective_rate(), 2);
  for (int i = 0; i < 5; ++i) {
    clock_.Advance(std::chrono::seconds(1));
    budget.OnRateLimited();
  }
  EXPECT_DOUBLE_EQ(budget.effective_rate(), 1);
}

TEST_F(RateBudgetTest, LimitAnswersWithinASecondCountOnce) {
  core::RateBudget budget(100, clock_);
  budget.OnRateLimited();
  clock_.Advance(milliseconds(500));
  budget.OnRateLimited();
  budget.OnRateLimited();
  EXPECT_DOUBLE_EQ(budget.effective_rate(), 50);
}

TEST_F(RateBudgetTest, RecoversTenPercentPerSecondOfCleanAnswers) {
  core::RateBudget budget(100, clock_);
  budget.OnRateLimited();
  ASSERT_DOUBLE_EQ(budget.effective_rate(), 50);
  budget.OnCleanAnswer();
  EXPECT_DOUBLE_EQ(budget.effective_rate(), 50) << "no raise within a second of the cut";
  clock_.Advance(std::chrono::seconds(1));
  budget.OnCleanAnswer();
  budget.OnCleanAnswer();
  EXPECT_DOUBLE_EQ(budget.effective_rate(), 55) << "one raise per second";
  for (int i = 0; i < 20; ++i) {
    clock_.Advance(std::chrono::seconds(1));
    budget.OnCleanAnswer();
  }
  EXPECT_DOUBLE_EQ(budget.effective_rate(), 100) << "capped at the configured rate";
}

TEST_F(RateBudgetTest, CutRateSlowsTokenRefill) {
  core::RateBudget budget(10, clock_);
  Drain(budget);
  budget.OnRateLimited();  // 5/s
  clock_.Advance(milliseconds(100));
  EXPECT_GT(budget.TryAcquire(), microseconds::zero()) << "at 5/s a token takes 200ms";
  clock_.Advance(milliseconds(100));
  EXPECT_EQ(budget.TryAcquire(), microseconds::zero());
}

TEST_F(RateBudgetTest, AShareIsNeverExceededInAnyOneSecondWindow) {
  core::RateBudget budget(200, clock_);
  budget.SetShare(50);
  // Greedy sender, one try per millisecond for 5 s, after a second of idling (full bucket).
  clock_.Advance(milliseconds(1000));
  std::vector<int64_t> sent_at;
  for (int ms = 0; ms < 5000; ++ms) {
    while (budget.TryAcquire() == microseconds::zero()) sent_at.push_back(ms);
    clock_.Advance(milliseconds(1));
  }
  size_t most = 0;
  for (size_t first = 0, last = 0; last < sent_at.size(); ++last) {
    while (sent_at[last] - sent_at[first] >= 1000) ++first;
    most = std::max(most, last - first + 1);
  }
  EXPECT_LE(most, 50u) << "the bucket's burst included";
  EXPECT_GE(sent_at.size(), 5u * 48) << "and the share is used";
}

TEST_F(RateBudgetTest, AShareIsUsedInFullAcrossPausesShorterThanItsWindow) {
  // A sender that pauses 100 ms after every 10 requests (a relay between rounds) still sends
  // its whole share in a second: what the pause did not use is there after it.
  core::RateBudget budget(200, clock_);
  budget.SetShare(100);
  int sent = 0;
  for (int ms = 0; ms < 3000; ++ms) {
    const bool pausing = (ms % 200) >= 100;
    while (!pausing && budget.TryAcquire() == microseconds::zero()) ++sent;
    clock_.Advance(milliseconds(1));
  }
  EXPECT_GE(sent, 3 * 100 * 95 / 100) << "a bucket of 20 ms would give about 60%";
}

TEST_F(RateBudgetTest, AShareIsCappedByTheConfiguredRate) {
  core::RateBudget budget(40, clock_);
  budget.SetShare(100);
  EXPECT_LE(budget.max_rate(), 40);
  budget.SetShare(20);
  EXPECT_NEAR(budget.max_rate(), 20, 1e-9);
  EXPECT_NEAR(budget.effective_rate(), 20, 1e-9) << "a lower share applies at once";
}

TEST_F(RateBudgetTest, ACutKeepsClimbingTowardsANewShare) {
  core::RateBudget budget(200, clock_);
  budget.SetShare(100);
  budget.OnRateLimited();
  EXPECT_NEAR(budget.effective_rate(), 90, 1e-9);
  budget.SetShare(150);
  EXPECT_NEAR(budget.effective_rate(), 90, 1e-9) << "the cut still holds";
  EXPECT_NEAR(budget.max_rate(), 150, 1e-9);
}

// Under a share the app's limit is known and the rate is the process's part of it: a limit
// answer cuts a tenth, once a second however many arrive, and a second of clean answers gives it
// back. A share far above what the app really allows still comes down, a tenth a second.
TEST_F(RateBudgetTest, UnderAShareALimitAnswerCutsATenth) {
  core::RateBudget budget(300, clock_);
  budget.SetShare(300);
  budget.OnRateLimited();
  budget.OnRateLimited();
  EXPECT_NEAR(budget.effective_rate(), 270, 1e-9);
  clock_.Advance(std::chrono::seconds(1));
  budget.OnCleanAnswer();
  EXPECT_NEAR(budget.effective_rate(), 297, 1e-9);
  for (int i = 0; i < 7; ++i) {
    clock_.Advance(std::chrono::seconds(1));
    budget.OnRateLimited();
  }
  EXPECT_LT(budget.effective_rate(), 150) << "7 cuts reach a limit half the share";
  EXPECT_GE(budget.effective_rate(), 140);
}

// A share that is not renewed in time (the member's beat is late) drops to the least rate, 1/s,
// and the next share applies in full at once.
TEST_F(RateBudgetTest, AShareNotRenewedInTimeDropsToTheLeastRateUntilTheNext) {
  core::RateBudget budget(200, clock_);
  budget.SetShare(100, milliseconds(1500));
  clock_.Advance(milliseconds(1499));
  EXPECT_GE(Drain(budget), 10) << "still the share's burst";
  EXPECT_FALSE(budget.share_expired());
  EXPECT_NEAR(budget.max_rate(), 100, 1e-9);

  clock_.Advance(milliseconds(1));
  budget.TryAcquire();
  EXPECT_TRUE(budget.share_expired());
  EXPECT_NEAR(budget.max_rate(), 1, 1e-9);
  EXPECT_NEAR(budget.effective_rate(), 1, 1e-9);
  // At most one request in any second while expired, however long it lasts.
  int sent = 0;
  for (int ms = 0; ms < 3000; ++ms) {
    while (budget.TryAcquire() == microseconds::zero()) ++sent;
    clock_.Advance(milliseconds(1));
  }
  EXPECT_LE(sent, 3);

  budget.SetShare(100, milliseconds(1500));
  EXPECT_FALSE(budget.share_expired());
  EXPECT_NEAR(budget.effective_rate(), 100, 1e-9) << "not held down as after a frequency limit";
  clock_.Advance(milliseconds(100));
  EXPECT_GE(Drain(budget), 10);
}

TEST_F(RateBudgetTest, AShareWithoutAnEndNeverExpires) {
  core::RateBudget budget(200, clock_);
  budget.SetShare(100);
  clock_.Advance(milliseconds(3'600'000));
  budget.TryAcquire();
  EXPECT_FALSE(budget.share_expired());
  EXPECT_NEAR(budget.max_rate(), 100, 1e-9);
}

TEST_F(RateBudgetTest, UsageCountsTokensAndWaitsSinceTheLastCall) {
  core::RateBudget budget(10, clock_);
  EXPECT_EQ(Drain(budget), 1);  // the drain's last try waited
  (void)budget.TryAcquire();
  core::RateBudget::Usage usage = budget.TakeUsage();
  EXPECT_EQ(usage.acquired, 1u);
  EXPECT_EQ(usage.waited, 2u);
  usage = budget.TakeUsage();
  EXPECT_EQ(usage.acquired, 0u);
  EXPECT_EQ(usage.waited, 0u);
}

// A clock that breaks the monotonic contract (a defensive path): set by hand, also backwards.
class BackwardsClock final : public core::Clock {
 public:
  int64_t NowMs() override { return 0; }
  int64_t SteadyMs() override { return steady_ms; }
  int64_t steady_ms = 1'000'000;
};

TEST_F(RateBudgetTest, ClockGoingBackwardsGivesNoTokens) {
  BackwardsClock backwards;
  core::RateBudget budget(10, backwards);
  Drain(budget);
  backwards.steady_ms -= 5000;
  EXPECT_GT(budget.TryAcquire(), microseconds::zero());
}

}  // namespace
}  // namespace room_outbox
