// The app's shared IM budget against the private MariaDB (both statement sets): members beat into
// room_outbox_im_member, split the app's limit, leave with their row, drop out when they stop
// beating, and keep a safe share when the table cannot be read. Real relay processes sharing an
// app limit are in relay_scale_test.cc.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>

#include "core/app_budget/app_budget_member.h"
#include "core/clock.h"
#include "support/test_database.h"
#include "support/wait.h"

namespace room_outbox::testing {
namespace {

using std::chrono::milliseconds;

constexpr milliseconds kBeat{100};
constexpr milliseconds kWait{10'000};
constexpr double kLimit = 100;

class AppBudgetTest : public ::testing::Test {
 protected:
  std::unique_ptr<core::AppBudgetMember> Join(const std::string& member_id) {
    core::AppBudgetSettings settings;
    settings.mysql = db_.Options();
    settings.app_key = core::AppKey("http://127.0.0.1:1", 1400000001);
    settings.member_id = member_id;
    settings.app_limit = kLimit;
    settings.process_cap = 200;
    settings.beat_interval = kBeat;
    return core::AppBudgetMember::Start(settings,
                                        std::make_shared<core::SharedRateBudget>(200, clock_), {});
  }
  int64_t Rows() { return db_.Scalar("SELECT COUNT(*) FROM room_outbox_im_member"); }

  core::SystemClock clock_;
  TestDatabase db_;
};

TEST_F(AppBudgetTest, MembersSplitTheLimitAndALeavingMemberTakesItsRow) {
  ASSERT_TRUE(db_.valid());
  auto a = Join("a");
  EXPECT_TRUE(a->status().table_reached) << a->status().error;
  EXPECT_DOUBLE_EQ(a->status().share, kLimit) << "alone: the whole limit";
  auto b = Join("b");
  EXPECT_EQ(b->status().live_members, 2);
  EXPECT_LE(b->status().share + a->status().share, kLimit + core::kMinShare)
      << "b waits for a to give way (taking the least share meanwhile)";
  EXPECT_EQ(Rows(), 2);
  ASSERT_TRUE(Eventually(
      [&] { return a->status().share == kLimit / 2 && b->status().share == kLimit / 2; }, kWait))
      << a->status().share << " + " << b->status().share;

  b.reset();
  EXPECT_EQ(Rows(), 1) << "b's row went with it";
  ASSERT_TRUE(Eventually(
      [&] { return a->status().live_members == 1 && a->status().share == kLimit; }, kWait))
      << a->status().share;
}

// A beat reads and writes under the app's budget lock: while another connection holds it, the
// member computes nothing (it keeps the safe share), and it computes again once the lock is free.
TEST_F(AppBudgetTest, ABeatReadsAndWritesUnderTheAppsLockAndNeverBesideAnother) {
  ASSERT_TRUE(db_.valid());
  const std::string key = core::AppKey("http://127.0.0.1:1", 1400000001);
  auto holder = core::AppMemberStore::Connect(db_.Options());
  ASSERT_TRUE(holder) << holder.error().message;
  const std::string name = core::AppBudgetLockName(db_.Options().database, key);
  EXPECT_EQ(name.size(), 35u) << "within MySQL's 64 characters";
  auto taken = (*holder)->Lock(name, 1);
  ASSERT_TRUE(taken && *taken);
  auto a = Join("a");  // its first beat waits for the lock and gives up
  EXPECT_FALSE(a->status().table_reached);
  EXPECT_NE(a->status().error.find("budget lock"), std::string::npos) << a->status().error;
  EXPECT_DOUBLE_EQ(a->status().share, kLimit / core::kAssumedMembersUnread)
      << "no share computed beside the lock's holder";
  EXPECT_EQ(Rows(), 0) << "nothing written without the lock";
  ASSERT_TRUE((*holder)->Unlock(name));
  ASSERT_TRUE(Eventually(
      [&] { return a->status().table_reached && a->status().share == kLimit; }, kWait))
      << a->status().error;
  EXPECT_EQ(Rows(), 1);
}

TEST_F(AppBudgetTest, AMemberThatStopsBeatingDropsOutWithinTwoBeats) {
  ASSERT_TRUE(db_.valid());
  auto a = Join("a");
  // c beats once and never again (a process that died without leaving).
  auto c = core::AppMemberStore::Connect(db_.Options());
  ASSERT_TRUE(c) << c.error().message;
  ASSERT_TRUE((*c)->Beat(core::AppKey("http://127.0.0.1:1", 1400000001), "c", 0, 0));
  const auto beat_at = std::chrono::steady_clock::now();
  ASSERT_TRUE(Eventually([&] { return a->status().live_members == 2; }, kWait));
  ASSERT_TRUE(Eventually([&] { return a->status().live_members == 1; }, kWait));
  const auto gone_after = std::chrono::steady_clock::now() - beat_at;
  // Live for two beats after its last one; gone at a's first beat after that.
  EXPECT_LE(gone_after, 2 * kBeat + 2 * kBeat + milliseconds(500));
  EXPECT_DOUBLE_EQ(a->status().share, kLimit);
}

TEST_F(AppBudgetTest, ATableThatCannotBeReadKeepsTheLastShare) {
  ASSERT_TRUE(db_.valid());
  auto a = Join("a");
  auto b = Join("b");
  ASSERT_TRUE(Eventually([&] { return a->status().share == kLimit / 2; }, kWait));
  db_.Exec("DROP TABLE room_outbox_im_member");
  ASSERT_TRUE(Eventually([&] { return !a->status().table_reached; }, kWait));
  EXPECT_DOUBLE_EQ(a->status().share, kLimit / 2) << "its last share, not the whole limit";
  EXPECT_FALSE(a->status().error.empty());
}

TEST_F(AppBudgetTest, ANewMemberThatCannotReadTheTableTakesAQuarter) {
  ASSERT_TRUE(db_.valid());
  db_.Exec("DROP TABLE room_outbox_im_member");
  auto a = Join("a");
  EXPECT_FALSE(a->status().table_reached);
  EXPECT_DOUBLE_EQ(a->status().share, kLimit / core::kAssumedMembersUnread);
}

}  // namespace
}  // namespace room_outbox::testing
