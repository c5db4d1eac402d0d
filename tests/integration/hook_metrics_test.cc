// The hook's metrics against the test MariaDB and the fake IM: what Hook::Metrics and its
// Prometheus text say after commits with each outcome, sync publishes that fail, the sync breaker
// opening after its 3 failures, and the background publisher's rows left to the relay.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "room_outbox/hook.h"
#include "support/fake_im_server.h"
#include "support/test_database.h"
#include "support/wait.h"

namespace room_outbox::testing {
namespace {

using std::chrono::milliseconds;

class HookMetricsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(db_.valid());
    ASSERT_TRUE(im_.running()) << im_.start_error();
  }
  void TearDown() override { im_.ClearFaults(); }

  std::unique_ptr<Hook> NewHook(SyncPublishMode mode = SyncPublishMode::kInline) {
    HookOptions options;
    options.mysql = db_.Options();
    options.tencent_im = im_.ClientOptions();
    options.sync_publish_timeout = milliseconds(2000);
    options.sync_publish = mode;
    options.node_id = "node-test";
    Error error;
    auto hook = CreateHook(options, &error);
    EXPECT_TRUE(hook) << error.message;
    return hook;
  }

  static Command Cmd(const std::string& id, const std::string& room) {
    return Command{id, room, "SendGift", "req", 1, "{}"};
  }
  static std::vector<Event> Events(const std::string& tag, int count) {
    std::vector<Event> events;
    for (int i = 0; i < count; ++i) {
      events.push_back(Event{"evt-" + tag + "-" + std::to_string(i), "RoomGiftSent", 1, 0, "{}"});
    }
    return events;
  }
  static bool Has(const std::string& text, const std::string& line) {
    return text.find(line + "\n") != std::string::npos;
  }

  TestDatabase db_;
  FakeImServer im_;
};

TEST_F(HookMetricsTest, CommitsAreCountedByOutcomeAndTimed) {
  auto hook = NewHook();
  ASSERT_TRUE(hook);
  CommitResult ok = hook->Commit(Cmd("cmd-m-1", "room-m1"), Events("m1", 2));
  ASSERT_EQ(ok.status, CommitStatus::kCommitted) << ok.error.message;
  CommitResult again = hook->Commit(Cmd("cmd-m-1", "room-m1"), Events("m1", 2));
  ASSERT_EQ(again.status, CommitStatus::kDuplicate);
  CommitResult refused = hook->Commit(Cmd("cmd-m-2", "room-m1"), Events("m2", 1),
                                      [](Transaction&) -> Status {
                                        return Error{ErrorCode::kAborted, "the room moved on"};
                                      });
  ASSERT_EQ(refused.status, CommitStatus::kFailed);

  const HookMetrics m = hook->Metrics();
  EXPECT_EQ(m.commits_committed, 1u);
  EXPECT_EQ(m.commits_duplicate, 1u);
  EXPECT_EQ(m.commits_failed, 1u);
  EXPECT_EQ(m.commits_unknown, 0u);
  EXPECT_EQ(m.sync_published, 2u);
  EXPECT_EQ(m.sync_failed, 0u);
  EXPECT_EQ(m.rows_left_to_relay, 0u);
  EXPECT_FALSE(m.sync_breaker_open);
  EXPECT_EQ(m.commit_duration_count, 3u);
  EXPECT_GT(m.commit_duration_sum_us, 0u);

  const std::string text = hook->MetricsText("cell-1");
  EXPECT_TRUE(Has(text, "room_outbox_hook_commits_total{hook=\"cell-1\",outcome=\"committed\"} 1"))
      << text;
  EXPECT_TRUE(Has(text, "room_outbox_hook_commits_total{hook=\"cell-1\",outcome=\"duplicate\"} 1"));
  EXPECT_TRUE(Has(text, "room_outbox_hook_commits_total{hook=\"cell-1\",outcome=\"failed\"} 1"));
  EXPECT_TRUE(
      Has(text, "room_outbox_hook_sync_publishes_total{hook=\"cell-1\",outcome=\"published\"} 2"));
  EXPECT_TRUE(Has(text, "room_outbox_hook_commit_duration_seconds_count{hook=\"cell-1\"} 3"));
}

// promtool's verdict on a text: its exit status and what it printed.
std::pair<int, std::string> PromtoolCheck(const std::string& text) {
  char path[] = "/tmp/hook-metrics-XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) return {-1, "mkstemp failed"};
  ::close(fd);
  std::ofstream(path) << text;
  FILE* pipe = popen(("promtool check metrics < " + std::string(path) + " 2>&1").c_str(), "r");
  std::string out;
  char buf[512];
  while (pipe != nullptr && fgets(buf, sizeof(buf), pipe) != nullptr) out += buf;
  const int status = pipe == nullptr ? -1 : pclose(pipe);
  std::remove(path);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

TEST_F(HookMetricsTest, PromtoolAcceptsTheTextOfSeveralNamedHooks) {
  if (std::system("command -v promtool >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "promtool not installed (Debian package prometheus)";
  }
  auto first = NewHook();
  auto second = NewHook();
  ASSERT_TRUE(first && second);
  ASSERT_EQ(first->Commit(Cmd("cmd-p-1", "room-p1"), Events("p1", 1)).status,
            CommitStatus::kCommitted);
  const std::string text = HookMetricsText(
      {LabelledHookMetrics{"cell-1", first->Metrics()}, LabelledHookMetrics{"cell-2", second->Metrics()}});
  std::printf("the hook's metrics as a room service serves them:\n%s", text.c_str());
  const auto [rc, out] = PromtoolCheck(text);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_EQ(out, "") << "promtool's lint found problems:\n" << out;
}

TEST_F(HookMetricsTest, FailingSyncPublishesOpenTheBreakerAndLeaveRowsToTheRelay) {
  im_.SetDefaultFault(FakeImFault::HttpStatus(502));
  auto hook = NewHook();
  ASSERT_TRUE(hook);
  // Two events per command: the first fails, the second is left untried behind it.
  for (int i = 0; i < 3; ++i) {
    const std::string n = std::to_string(i);
    CommitResult r = hook->Commit(Cmd("cmd-f-" + n, "room-f" + n), Events("f" + n, 2));
    ASSERT_EQ(r.status, CommitStatus::kCommitted) << r.error.message;
  }
  HookMetrics m = hook->Metrics();
  EXPECT_EQ(m.commits_committed, 3u);
  EXPECT_EQ(m.sync_failed, 3u);
  EXPECT_EQ(m.sync_published, 0u);
  EXPECT_EQ(m.sync_skipped_command_failed, 3u);
  EXPECT_EQ(m.rows_left_to_relay, 6u);
  EXPECT_TRUE(m.sync_breaker_open) << "3 failures in a row open the sync breaker";

  CommitResult skipped = hook->Commit(Cmd("cmd-f-open", "room-fo"), Events("fo", 2));
  ASSERT_EQ(skipped.status, CommitStatus::kCommitted);
  m = hook->Metrics();
  EXPECT_EQ(m.sync_failed, 3u) << "no request while the breaker is open";
  EXPECT_EQ(m.sync_skipped_breaker_open, 2u);
  EXPECT_EQ(m.rows_left_to_relay, 8u);
  EXPECT_EQ(db_.Scalar("SELECT COUNT(*) FROM room_outbox WHERE status = 'pending'"), 8);

  const std::string text = hook->MetricsText();
  EXPECT_TRUE(Has(text, "room_outbox_hook_sync_breaker_open 1")) << text;
  EXPECT_TRUE(Has(text, "room_outbox_hook_rows_left_to_relay_total 8"));
  EXPECT_TRUE(Has(text, "room_outbox_hook_sync_publishes_total{outcome=\"failed\"} 3"));
  EXPECT_TRUE(Has(text, "room_outbox_hook_sync_skipped_total{reason=\"breaker_open\"} 2"));
}

TEST_F(HookMetricsTest, TheBackgroundPublisherCountsItsFailuresAndReleases) {
  im_.SetDefaultFault(FakeImFault::HttpStatus(502));
  auto hook = NewHook(SyncPublishMode::kBackground);
  ASSERT_TRUE(hook);
  CommitResult r = hook->Commit(Cmd("cmd-b-1", "room-b1"), Events("b1", 2));
  ASSERT_EQ(r.status, CommitStatus::kCommitted) << r.error.message;
  ASSERT_EQ(r.events[0].state, DeliveryState::kQueued);
  ASSERT_TRUE(Eventually([&] { return hook->Metrics().rows_left_to_relay == 2; },
                         milliseconds(20000)))
      << hook->MetricsText();
  const HookMetrics m = hook->Metrics();
  EXPECT_EQ(m.sync_failed, 1u);
  EXPECT_EQ(m.sync_skipped_command_failed, 1u);
  EXPECT_EQ(m.commits_committed, 1u);
}

TEST_F(HookMetricsTest, SyncOffLeavesEveryRowToTheRelay) {
  auto hook = NewHook(SyncPublishMode::kOff);
  ASSERT_TRUE(hook);
  CommitResult r = hook->Commit(Cmd("cmd-o-1", "room-o1"), Events("o1", 3));
  ASSERT_EQ(r.status, CommitStatus::kCommitted) << r.error.message;
  const HookMetrics m = hook->Metrics();
  EXPECT_EQ(m.sync_skipped_sync_off, 3u);
  EXPECT_EQ(m.rows_left_to_relay, 3u);
  EXPECT_EQ(m.sync_published + m.sync_failed, 0u);
  EXPECT_EQ(im_.Stats().requests, 0u);
}

}  // namespace
}  // namespace room_outbox::testing
