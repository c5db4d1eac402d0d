// ProcessRegistry: one object per key while anyone holds it; the last user frees it; the next
// Get of the key makes a new one. RegistryKey: distinct parts make distinct keys.
#include "core/process_registry.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace room_outbox {
namespace {

struct Counted {
  explicit Counted(std::atomic<int>& alive) : alive_(alive) { ++alive_; }
  ~Counted() { --alive_; }
  std::atomic<int>& alive_;
};

class ProcessRegistryTest : public ::testing::Test {
 protected:
  std::shared_ptr<Counted> Get(const std::string& key) {
    return registry_.Get(key, [this] {
      ++made_;
      return std::make_shared<Counted>(alive_);
    });
  }

  std::atomic<int> alive_{0};
  int made_ = 0;
  core::ProcessRegistry<Counted> registry_;
};

TEST_F(ProcessRegistryTest, UsersOfOneKeyShareOneObjectAndOtherKeysHaveTheirOwn) {
  auto a = Get("a");
  auto b = Get("a");
  auto other = Get("b");
  EXPECT_EQ(a.get(), b.get());
  EXPECT_NE(a.get(), other.get());
  EXPECT_EQ(made_, 2);
  EXPECT_EQ(alive_, 2);
  EXPECT_EQ(registry_.live(), 2u);
}

TEST_F(ProcessRegistryTest, TheLastUserFreesTheObjectAndTheNextGetMakesANewOne) {
  auto first = Get("a");
  auto second = Get("a");
  first.reset();
  EXPECT_EQ(alive_, 1) << "one user left";
  second.reset();
  EXPECT_EQ(alive_, 0) << "the registry holds it weakly";
  EXPECT_EQ(registry_.live(), 0u);
  auto again = Get("a");
  EXPECT_EQ(made_, 2);
  EXPECT_EQ(alive_, 1);
}

TEST_F(ProcessRegistryTest, AnObjectOutlivesTheRegistry) {
  std::shared_ptr<Counted> user;
  {
    core::ProcessRegistry<Counted> scoped;
    user = scoped.Get("a", [this] { return std::make_shared<Counted>(alive_); });
  }
  EXPECT_EQ(alive_, 1);
  user.reset();
  EXPECT_EQ(alive_, 0);
}

TEST_F(ProcessRegistryTest, EveryThreadGetsTheSameObject) {
  auto mine = Get("threads");
  std::vector<Counted*> seen(8, nullptr);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < seen.size(); ++t) {
    threads.emplace_back([this, &seen, t] { seen[t] = Get("threads").get(); });
  }
  for (std::thread& thread : threads) thread.join();
  for (Counted* object : seen) EXPECT_EQ(object, mine.get());
}

TEST(RegistryKeyTest, DistinctPartsMakeDistinctKeys) {
  EXPECT_EQ(core::RegistryKey(std::string("https://im"), uint64_t{1}, 50.0),
            core::RegistryKey(std::string("https://im"), uint64_t{1}, 50.0));
  EXPECT_NE(core::RegistryKey(std::string("a b"), uint64_t{1}),
            core::RegistryKey(std::string("a"), std::string("b 1")));
  EXPECT_NE(core::RegistryKey(std::string("x"), 50.0),
            core::RegistryKey(std::string("x"), 50.000001));
  EXPECT_NE(core::RegistryKey(std::string("x"), uint64_t{12}),
            core::RegistryKey(std::string("x1"), uint64_t{2}));
}

}  // namespace
}  // namespace room_outbox
