// Room-service processes whose hook sends are members of the app's shared IM budget: one member
// row per process, database and app, whatever the number of Hooks, gone with the last Hook; a
// hook that sends nothing is no member. Against the private MariaDB (both statement sets).
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>

#include "core/app_budget/app_budget_member.h"
#include "core/clock.h"
#include "room_outbox/hook.h"
#include "support/fake_im_server.h"
#include "support/test_database.h"
#include "support/wait.h"

namespace room_outbox::testing {
namespace {

using std::chrono::milliseconds;

class HookAppBudgetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(db_.valid());
    ASSERT_TRUE(im_.running()) << im_.start_error();
  }

  HookOptions Options(SyncPublishMode mode) const {
    HookOptions options;
    options.mysql = db_.Options();
    options.tencent_im = im_.ClientOptions();
    options.tencent_im.requests_per_second = 150;
    options.tencent_im.app_requests_per_second = 100;
    options.sync_publish = mode;
    return options;
  }

  std::unique_ptr<Hook> NewHook(SyncPublishMode mode) {
    Error error;
    auto hook = CreateHook(Options(mode), &error);
    EXPECT_TRUE(hook) << error.message;
    return hook;
  }

  int64_t Members() { return db_.Scalar("SELECT COUNT(*) FROM room_outbox_im_member"); }

  TestDatabase db_;
  FakeImServer im_;
};

TEST_F(HookAppBudgetTest, HooksThatSendAreOneMemberUntilTheLastIsGone) {
  auto first = NewHook(SyncPublishMode::kInline);
  ASSERT_TRUE(first);
  EXPECT_EQ(Members(), 1) << "the first Hook that sends joins the app's budget";
  auto second = NewHook(SyncPublishMode::kBackground);
  ASSERT_TRUE(second);
  EXPECT_EQ(Members(), 1) << "one member per process and app";
  EXPECT_EQ(
      db_.Scalar("SELECT COUNT(*) FROM room_outbox_im_member WHERE app_key = '" +
                 core::AppKey(im_.ClientOptions().endpoint, im_.ClientOptions().sdk_app_id) + "'"),
      1);
  first.reset();
  EXPECT_EQ(Members(), 1) << "a Hook still sends";
  second.reset();
  EXPECT_EQ(Members(), 0) << "the last Hook took the member's row with it";
}

TEST_F(HookAppBudgetTest, AHookThatSendsNothingIsNoMember) {
  auto hook = NewHook(SyncPublishMode::kOff);
  ASSERT_TRUE(hook);
  EXPECT_EQ(Members(), 0);
}

TEST_F(HookAppBudgetTest, AHookAndARelaySplitTheAppLimit) {
  core::SystemClock clock;
  core::AppBudgetSettings relay;
  relay.mysql = db_.Options();
  relay.app_key = core::AppKey(im_.ClientOptions().endpoint, im_.ClientOptions().sdk_app_id);
  relay.member_id = "relay-1";
  relay.app_limit = 100;
  relay.process_cap = 200;
  relay.beat_interval = milliseconds(100);
  auto relay_member =
      core::AppBudgetMember::Start(relay, std::make_shared<core::SharedRateBudget>(200, clock), {});
  ASSERT_TRUE(relay_member->status().table_reached) << relay_member->status().error;
  EXPECT_DOUBLE_EQ(relay_member->status().share, 100) << "alone: the whole limit";

  auto hook = NewHook(SyncPublishMode::kInline);
  ASSERT_TRUE(hook);
  EXPECT_EQ(Members(), 2);
  ASSERT_TRUE(Eventually([&] { return relay_member->status().live_members == 2; },
                         milliseconds(10'000)));
  EXPECT_LT(relay_member->status().share, 100) << "the relay gave part of the limit to the hook";
  hook.reset();
  ASSERT_TRUE(Eventually(
      [&] {
        return relay_member->status().live_members == 1 && relay_member->status().share == 100;
      },
      milliseconds(10'000)))
      << relay_member->status().share;
}

}  // namespace
}  // namespace room_outbox::testing
