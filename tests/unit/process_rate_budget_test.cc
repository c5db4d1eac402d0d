#include "core/tencent/process_rate_budget.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "fake_clock.h"

namespace room_outbox {
namespace {

using std::chrono::microseconds;

TEST(ProcessRateBudgetTest, PublishersOfOneConfigurationShareOneBudget) {
  auto a = core::ProcessRateBudget("https://im.example", 1400000000, 50);
  auto b = core::ProcessRateBudget("https://im.example", 1400000000, 50);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a.get(), b.get());
  // A limit seen through one is seen by the other.
  a->OnRateLimited();
  EXPECT_EQ(b->effective_rate(), 25);
}

TEST(ProcessRateBudgetTest, OtherAppsEndpointsAndRatesHaveTheirOwn) {
  auto base = core::ProcessRateBudget("https://im.example", 1, 50);
  EXPECT_NE(base.get(), core::ProcessRateBudget("https://im.example", 2, 50).get());
  EXPECT_NE(base.get(), core::ProcessRateBudget("https://other.example", 1, 50).get());
  EXPECT_NE(base.get(), core::ProcessRateBudget("https://im.example", 1, 60).get());
}

TEST(ProcessRateBudgetTest, AFreshBudgetOnceNobodyHoldsTheOldOne) {
  auto first = core::ProcessRateBudget("https://fresh.example", 7, 100);
  first->OnRateLimited();
  ASSERT_EQ(first->effective_rate(), 50);
  first.reset();
  auto second = core::ProcessRateBudget("https://fresh.example", 7, 100);
  EXPECT_EQ(second->effective_rate(), 100) << "a new, full budget";
}

TEST(ProcessRateBudgetTest, EveryThreadGetsTheSameBudget) {
  auto mine = core::ProcessRateBudget("https://threads.example", 9, 100);
  std::vector<core::SharedRateBudget*> seen(8, nullptr);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < seen.size(); ++t) {
    threads.emplace_back(
        [&seen, t] { seen[t] = core::ProcessRateBudget("https://threads.example", 9, 100).get(); });
  }
  for (auto& t : threads) {
    t.join();
  }
  for (core::SharedRateBudget* budget : seen) {
    EXPECT_EQ(budget, mine.get());
  }
}

TEST(ProcessRateBudgetTest, TokensAreSharedAcrossThreads) {
  // 100/s holds a burst of 10 tokens; eight threads together take exactly those 10 (the clock
  // does not move, so none refills).
  testing::FakeClock clock;
  core::SharedRateBudget budget(100, clock);
  std::atomic<int> taken{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 5; ++i) {
        if (budget.TryAcquire() == microseconds::zero()) {
          ++taken;
        }
      }
    });
  }
  for (auto& t : threads) {
    t.join();
  }
  EXPECT_EQ(taken.load(), 10);
}

}  // namespace
}  // namespace room_outbox
