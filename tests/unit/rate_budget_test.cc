#include "core/tencent/rate_budget.h"

#include <gtest/gtest.h>

namespace room_outbox {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;

class RateBudgetTest : public ::testing::Test {
 protected:
  RateBudget::TimePoint now_{std::chrono::seconds(1000)};
  RateBudget::Now clock_ = [this] { return now_; };

  // Takes tokens until the bucket says wait; returns how many were taken.
  int Drain(RateBudget& budget) {
    int taken = 0;
    while (budget.TryAcquire() == microseconds::zero()) {
      ++taken;
    }
    return taken;
  }
};

TEST_F(RateBudgetTest, StartsWithHundredMillisecondsOfBurst) {
  RateBudget budget(200, clock_);
  EXPECT_EQ(Drain(budget), 20);
  RateBudget slow(5, clock_);
  EXPECT_EQ(Drain(slow), 1) << "at least one token";
}

TEST_F(RateBudgetTest, WaitIsTimeToNextToken) {
  RateBudget budget(10, clock_);
  ASSERT_EQ(budget.TryAcquire(), microseconds::zero());
  EXPECT_EQ(budget.TryAcquire(), microseconds(100'000));
  now_ += milliseconds(40);
  EXPECT_NEAR(budget.TryAcquire().count(), 60'000, 1);
  now_ += milliseconds(60);
  EXPECT_EQ(budget.TryAcquire(), microseconds::zero());
}

TEST_F(RateBudgetTest, KeepsToRateOverOneSecond) {
  RateBudget budget(50, clock_);
  int sent = 0;
  // Step 1ms at a time through one second, taking every token offered.
  for (int ms = 0; ms < 1000; ++ms) {
    sent += Drain(budget);
    now_ += milliseconds(1);
  }
  // 5 burst + 50 refilled in the second.
  EXPECT_GE(sent, 53);
  EXPECT_LE(sent, 55);
}

TEST_F(RateBudgetTest, RateLimitHalvesRateWithFloorOfOne) {
  RateBudget budget(8, clock_);
  budget.OnRateLimited();
  EXPECT_DOUBLE_EQ(budget.effective_rate(), 4);
  now_ += std::chrono::seconds(1);
  budget.OnRateLimited();
  EXPECT_DOUBLE_EQ(budget.effective_rate(), 2);
  for (int i = 0; i < 5; ++i) {
    now_ += std::chrono::seconds(1);
    budget.OnRateLimited();
  }
  EXPECT_DOUBLE_EQ(budget.effective_rate(), 1);
}

TEST_F(RateBudgetTest, LimitAnswersWithinASecondCountOnce) {
  RateBudget budget(100, clock_);
  budget.OnRateLimited();
  now_ += milliseconds(500);
  budget.OnRateLimited();
  budget.OnRateLimited();
  EXPECT_DOUBLE_EQ(budget.effective_rate(), 50);
}

TEST_F(RateBudgetTest, RecoversTenPercentPerSecondOfCleanAnswers) {
  RateBudget budget(100, clock_);
  budget.OnRateLimited();
  ASSERT_DOUBLE_EQ(budget.effective_rate(), 50);
  budget.OnCleanAnswer();
  EXPECT_DOUBLE_EQ(budget.effective_rate(), 50) << "no raise within a second of the cut";
  now_ += std::chrono::seconds(1);
  budget.OnCleanAnswer();
  budget.OnCleanAnswer();
  EXPECT_DOUBLE_EQ(budget.effective_rate(), 55) << "one raise per second";
  for (int i = 0; i < 20; ++i) {
    now_ += std::chrono::seconds(1);
    budget.OnCleanAnswer();
  }
  EXPECT_DOUBLE_EQ(budget.effective_rate(), 100) << "capped at the configured rate";
}

TEST_F(RateBudgetTest, CutRateSlowsTokenRefill) {
  RateBudget budget(10, clock_);
  Drain(budget);
  budget.OnRateLimited();  // 5/s
  now_ += milliseconds(100);
  EXPECT_GT(budget.TryAcquire(), microseconds::zero()) << "at 5/s a token takes 200ms";
  now_ += milliseconds(100);
  EXPECT_EQ(budget.TryAcquire(), microseconds::zero());
}

TEST_F(RateBudgetTest, ClockGoingBackwardsGivesNoTokens) {
  RateBudget budget(10, clock_);
  Drain(budget);
  now_ -= std::chrono::seconds(5);
  EXPECT_GT(budget.TryAcquire(), microseconds::zero());
}

}  // namespace
}  // namespace room_outbox
