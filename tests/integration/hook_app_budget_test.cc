// Room-service processes whose hook sends are members of the app's shared IM budget: one member
// row per process, database and app, whatever the number of Hooks, gone with the last Hook; a
// hook that sends nothing is no member. Against the private MariaDB (both statement sets).
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/app_budget/app_budget_member.h"
#include "core/clock.h"
#include "room_outbox/hook.h"
#include "support/fake_im_server.h"
#include "support/relay_process.h"
#include "support/test_database.h"
#include "support/test_rows.h"
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

  // `rows` pending rows over 20 rooms of their own, due at once: a backlog only a relay sends.
  void InsertBacklog(int rows) {
    std::string values;
    for (int n = 0; n < rows; ++n) {
      const std::string room = "backlog-" + std::to_string(n % 20);
      const std::string id = "backlog-ev-" + std::to_string(n);
      values += std::string(values.empty() ? "" : ", ") + "(" + SqlQuote(id) +
                ", 'RoomGiftSent', " + SqlQuote(room) + ", " + SqlQuote("cmd-" + id) + ", " +
                SqlQuote("req-" + id) + ", " + SqlQuote(TestEnvelope(id, room, n + 1, "backlog")) +
                ", 'pending', 0, 0, " + kServerNowSql + ", " + kServerNowSql + ")";
    }
    db_.Exec(
        "INSERT INTO room_outbox (event_id, event_type, room_id, command_id, request_id, envelope, "
        "status, retry_count, next_attempt_at_ms, created_at_ms, updated_at_ms) VALUES " +
        values);
  }

  int64_t Members() { return db_.Scalar("SELECT COUNT(*) FROM room_outbox_im_member"); }

  // (demand, share) of this process's member row (the hook's) or of the other one (a relay's),
  // when it is there.
  struct MemberRow {
    int64_t demand = 0;
    int64_t share = 0;
  };
  std::optional<MemberRow> Member(bool this_process) {
    const std::string mine = "'%:" + std::to_string(::getpid()) + ":%'";
    const auto rows =
        db_.Query(std::string("SELECT demand, share FROM room_outbox_im_member WHERE member_id ") +
                  (this_process ? "LIKE " : "NOT LIKE ") + mine);
    if (rows.size() != 1 || !rows[0][0] || !rows[0][1]) return std::nullopt;
    return MemberRow{std::stoll(*rows[0][0]), std::stoll(*rows[0][1])};
  }

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
  ASSERT_TRUE(
      Eventually([&] { return relay_member->status().live_members == 2; }, milliseconds(10'000)));
  EXPECT_LT(relay_member->status().share, 100) << "the relay gave part of the limit to the hook";
  hook.reset();
  ASSERT_TRUE(Eventually(
      [&] {
        return relay_member->status().live_members == 1 && relay_member->status().share == 100;
      },
      milliseconds(10'000)))
      << relay_member->status().share;
}

// A room service sending all it can (its hook waits for tokens every beat, so it demands the whole
// limit) holds nearly all of the app's budget; a relay that starts beside it with a backlog of its
// own (rows the hook never sends) waits for tokens too and so demands the whole limit, and gets its
// fair part (half, both wanting all) within a few beats. A demand read from what the relay sent
// under its small share would keep it there (about a tenth of the limit) for as long as the hook
// sends.
TEST_F(HookAppBudgetTest, ARelayWithABacklogGetsItsFairPartBesideAHookThatSendsAllItCan) {
  auto hook = NewHook(SyncPublishMode::kInline);
  ASSERT_TRUE(hook);
  std::atomic<bool> stop{false};
  std::atomic<int> failed{0};
  std::thread storm([&] {
    for (int n = 0; !stop.load(); ++n) {
      Command command;
      command.room_id = "storm-" + std::to_string(n % 20);
      command.command_id = "storm-cmd-" + std::to_string(n);
      command.command_type = "SendGift";
      command.room_seq = n + 1;
      Event event;
      event.event_id = "storm-ev-" + std::to_string(n);
      event.event_type = "RoomGiftSent";
      event.room_seq = n + 1;
      event.payload = R"({"gift":"rose"})";
      if (hook->Commit(command, {event}).status != CommitStatus::kCommitted) ++failed;
    }
  });
  struct StopStorm {
    std::atomic<bool>& stop;
    std::thread& storm;
    ~StopStorm() {
      stop = true;
      storm.join();
    }
  } stop_storm{stop, storm};
  const auto hook_holds_the_limit = [&] {
    const auto row = Member(true);
    return row && row->demand == 100 && row->share >= 90;
  };
  ASSERT_TRUE(Eventually(hook_holds_the_limit, milliseconds(20'000)))
      << "the hook alone, sending all it can, demands and takes the whole limit";

  InsertBacklog(3'000);  // a minute's worth at the relay's fair part
  RelayProcessOptions options;
  options.node_id = "budget-join-relay";
  options.tencent_im = {{"requests_per_second", "200"}, {"app_requests_per_second", "100"}};
  RelayProcess relay(db_, im_, options);
  ASSERT_TRUE(relay.Start());
  ASSERT_TRUE(Eventually([&] { return Member(false).has_value(); }, milliseconds(20'000)))
      << relay.StderrTail();
  const auto joined = std::chrono::steady_clock::now();
  int64_t lowest = Member(false)->share;
  const auto fair = [&] {
    const auto row = Member(false);
    if (row) lowest = std::min(lowest, row->share);
    return row && row->share >= 45;  // half of the limit, less the rounding of the shares
  };
  ASSERT_TRUE(Eventually(fair, milliseconds(20'000)))
      << "relay: " << Member(false)->share << "/s, demand " << Member(false)->demand
      << "; hook: " << Member(true)->share << "/s\n"
      << relay.StderrTail();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - joined).count();
  const auto hook_row = Member(true);
  ASSERT_TRUE(hook_row);
  EXPECT_LE(hook_row->share, 55) << "the hook gave way";
  EXPECT_GT(db_.Scalar("SELECT COUNT(*) FROM room_outbox WHERE status = 'pending' AND "
                       "room_id LIKE 'backlog-%'"),
            0)
      << "not vacuous: the relay still had a backlog";
  std::printf(
      "relay joining a hook that sends all it can: from %lld/s to its fair part in %.1f s\n",
      static_cast<long long>(lowest), seconds);
  stop = true;
  auto exit = relay.Stop(std::chrono::seconds(20));
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->exit_code, 0) << Describe(*exit);
  EXPECT_EQ(failed.load(), 0) << "every command committed";
}

}  // namespace
}  // namespace room_outbox::testing
