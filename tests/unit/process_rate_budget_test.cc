#include "core/tencent/process_rate_budget.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace room_outbox {
namespace {

using std::chrono::microseconds;

TEST(ProcessRateBudgetTest, PublishersOfOneConfigurationShareOneBudget) {
  auto a = ProcessRateBudget("https://im.example", 1400000000, 50);
  auto b = ProcessRateBudget("https://im.example", 1400000000, 50);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a.get(), b.get());
  // A limit seen through one is seen by the other.
  a->OnRateLimited();
  EXPECT_EQ(b->effective_rate(), 25);
}

TEST(ProcessRateBudgetTest, OtherAppsEndpointsAndRatesHaveTheirOwn) {
  auto base = ProcessRateBudget("https://im.example", 1, 50);
  EXPECT_NE(base.get(), ProcessRateBudget("https://im.example", 2, 50).get());
  EXPECT_NE(base.get(), ProcessRateBudget("https://other.example", 1, 50).get());
  EXPECT_NE(base.get(), ProcessRateBudget("https://im.example", 1, 60).get());
}

TEST(ProcessRateBudgetTest, AFreshBudgetOnceNobodyHoldsTheOldOne) {
  auto first = ProcessRateBudget("https://fresh.example", 7, 100);
  first->OnRateLimited();
  ASSERT_EQ(first->effective_rate(), 50);
  first.reset();
  auto second = ProcessRateBudget("https://fresh.example", 7, 100);
  EXPECT_EQ(second->effective_rate(), 100) << "a new, full budget";
}

TEST(ProcessRateBudgetTest, TokensAreSharedAcrossThreads) {
  // 100/s holds a burst of 10 tokens; eight threads together take exactly those 10.
  const auto started = std::chrono::steady_clock::now();
  auto budget = ProcessRateBudget("https://threads.example", 9, 100);
  std::atomic<int> taken{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      auto mine = ProcessRateBudget("https://threads.example", 9, 100);
      for (int i = 0; i < 5; ++i) {
        if (mine->TryAcquire() == microseconds::zero()) {
          ++taken;
        }
      }
    });
  }
  for (auto& t : threads) {
    t.join();
  }
  // Tokens refill while the threads run (100/s: one per 10 ms): a few, or more on a loaded
  // machine where starting eight threads takes long.
  const auto elapsed_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                              std::chrono::steady_clock::now() - started)
                              .count();
  EXPECT_GE(taken.load(), 10);
  EXPECT_LE(taken.load(), 10 + 1 + static_cast<int>(elapsed_ms / 10)) << elapsed_ms << " ms";
}

}  // namespace
}  // namespace room_outbox
