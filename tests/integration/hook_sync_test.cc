// The hook's sync publish against the test MariaDB and the fake IM: one sync_publish_timeout per
// command, the process-wide sync breaker, the commit-time body-size and nesting checks, and the
// session's strict sql_mode.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/mysql/connection.h"
#include "room_outbox/hook.h"
#include "support/delivery_checks.h"
#include "support/fake_im_server.h"
#include "support/relay_process.h"
#include "support/test_database.h"

namespace room_outbox::testing {
namespace {

using std::chrono::milliseconds;
using SteadyClock = std::chrono::steady_clock;

class HookSyncTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(db_.valid());
    ASSERT_TRUE(im_.running()) << im_.start_error();
  }

  std::unique_ptr<Hook> NewHook(milliseconds sync_publish_timeout) {
    HookOptions options;
    options.mysql = db_.Options();
    options.tencent_im = im_.ClientOptions();
    options.sync_publish_timeout = sync_publish_timeout;
    options.node_id = "node-test";
    Error error;
    auto hook = CreateHook(options, &error);
    EXPECT_TRUE(hook) << error.message;
    return hook;
  }

  static std::vector<Event> Events(const std::string& tag, int count, const std::string& payload = "{}") {
    std::vector<Event> events;
    for (int i = 0; i < count; ++i) {
      events.push_back(Event{"evt-" + tag + "-" + std::to_string(i), "RoomGiftSent", 1, 0, payload});
    }
    return events;
  }

  int64_t Rows() { return db_.Scalar("SELECT COUNT(*) FROM room_outbox"); }

  TestDatabase db_;
  FakeImServer im_;
};

TEST_F(HookSyncTest, ThreeEventsShareOneSyncDeadlineAndTheRestGoToTheRelayInOrder) {
  im_.SetDefaultFault(FakeImFault::Ok().After(milliseconds(400)));
  auto hook = NewHook(milliseconds(500));
  ASSERT_TRUE(hook);
  const auto start = SteadyClock::now();
  CommitResult result =
      hook->Commit(Command{"cmd-three", "room-3", "SendGift", "req-1", 1, "{}"}, Events("three", 3));
  const auto took =
      std::chrono::duration_cast<milliseconds>(SteadyClock::now() - start).count();
  std::printf("a command with 3 events, IM answering in 400 ms, sync_publish_timeout 500ms: "
              "Commit returned in %lld ms\n",
              static_cast<long long>(took));
  ASSERT_EQ(result.status, CommitStatus::kCommitted) << result.error.message;
  EXPECT_LT(took, 1500);
  ASSERT_EQ(result.events.size(), 3u);
  EXPECT_EQ(result.events[0].state, DeliveryState::kPublished) << result.events[0].error;
  EXPECT_EQ(result.events[2].state, DeliveryState::kPending);

  RelayProcessOptions options;
  options.args = {"--once"};
  RelayProcess relay(db_, im_, options);
  ASSERT_TRUE(relay.Start());
  auto exit = relay.Wait(milliseconds(20000));
  ASSERT_TRUE(exit) << relay.StderrTail();
  EXPECT_EQ(exit->exit_code, 0) << relay.StderrTail();
  EXPECT_EQ(db_.Scalar("SELECT COUNT(*) FROM room_outbox WHERE status = 'published'"), 3);
  // In order at IM: the first delivery of each event comes after the previous event's.
  std::vector<std::string> order;
  const auto delivered = DeliveredByRoom(im_);
  ASSERT_EQ(delivered.count("room-3"), 1u);
  for (const FakeImRequest& request : delivered.at("room-3")) {
    if (order.empty() || order.back() != request.event_id) order.push_back(request.event_id);
  }
  std::vector<std::string> firsts;
  for (const std::string& id : order) {
    if (std::find(firsts.begin(), firsts.end(), id) == firsts.end()) firsts.push_back(id);
  }
  EXPECT_EQ(firsts, (std::vector<std::string>{"evt-three-0", "evt-three-1", "evt-three-2"}));
  im_.ClearFaults();
}

TEST_F(HookSyncTest, WithImDownTheSyncBreakerOpensAndLaterCommitsDoNotWaitForIm) {
  im_.SetDefaultFault(FakeImFault::Ok().After(milliseconds(2000)));  // every answer too late
  // Two hooks of one process (two room-service threads): the breaker is shared.
  auto first = NewHook(milliseconds(200));
  auto second = NewHook(milliseconds(200));
  ASSERT_TRUE(first && second);
  for (int i = 0; i < 3; ++i) {
    CommitResult r = first->Commit(
        Command{"cmd-trip-" + std::to_string(i), "room-t" + std::to_string(i), "SendGift", "r", 1,
                "{}"},
        Events("trip-" + std::to_string(i), 1));
    ASSERT_EQ(r.status, CommitStatus::kCommitted);
    EXPECT_EQ(r.events[0].state, DeliveryState::kPending);
  }
  EXPECT_EQ(im_.Stats().requests, 3u);

  double slowest_ms = 0;
  for (int i = 0; i < 10; ++i) {
    Hook& hook = i % 2 == 0 ? *second : *first;
    const auto start = SteadyClock::now();
    CommitResult r = hook.Commit(
        Command{"cmd-open-" + std::to_string(i), "room-o" + std::to_string(i), "SendGift", "r", 1,
                "{}"},
        Events("open-" + std::to_string(i), 3));
    slowest_ms = std::max(
        slowest_ms, std::chrono::duration<double, std::milli>(SteadyClock::now() - start).count());
    ASSERT_EQ(r.status, CommitStatus::kCommitted);
    for (const EventDelivery& d : r.events) {
      EXPECT_EQ(d.state, DeliveryState::kPending);
      EXPECT_EQ(d.error, "sync publish skipped: IM failing, breaker open");
    }
  }
  std::printf("sync breaker open: 10 commits of 3 events made no IM request (requests stay at "
              "%zu); slowest commit %.2f ms\n",
              im_.Stats().requests, slowest_ms);
  EXPECT_EQ(im_.Stats().requests, 3u);
  // Written due at once for the relay, not leased, not charged.
  EXPECT_EQ(db_.Scalar("SELECT COUNT(*) FROM room_outbox WHERE event_id LIKE 'evt-open-%' AND "
                       "status = 'pending' AND claim_token IS NULL AND retry_count = 0"),
            30);
  im_.ClearFaults();
}

TEST_F(HookSyncTest, OversizedBodiesAndDeepPayloadsAreRefusedAndWriteNothing) {
  auto hook = NewHook(milliseconds(300));
  ASSERT_TRUE(hook);
  const std::string big = R"({"text":")" + std::string(13000, 'x') + R"("})";
  std::string deep = R"({"a":)";
  for (int i = 0; i < 100; ++i) deep += "[";
  for (int i = 0; i < 100; ++i) deep += "]";
  deep += "}";
  // Far deeper than any parser's stack would survive.
  const std::string abyss = std::string(200000, '[') + std::string(200000, ']');
  struct Case {
    const char* name;
    std::string payload;
    const char* expect;
  } cases[] = {{"body over 12288", big, "max_body_bytes 12288"},
               {"100 levels", deep, "nested deeper than 63"},
               {"200000 levels", abyss, "nested deeper than 63"}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    bool caller_ran = false;
    CommitResult r = hook->Commit(Command{"cmd-bad", "room-1", "SendGift", "r", 1, "{}"},
                                  {Event{"evt-bad", "RoomGiftSent", 1, 0, c.payload}},
                                  [&](Transaction&) {
                                    caller_ran = true;
                                    return Status();
                                  });
    EXPECT_EQ(r.status, CommitStatus::kFailed);
    EXPECT_EQ(r.error.code, ErrorCode::kInvalidArgument);
    EXPECT_NE(r.error.message.find("evt-bad"), std::string::npos) << r.error.message;
    EXPECT_NE(r.error.message.find(c.expect), std::string::npos) << r.error.message;
    EXPECT_FALSE(caller_ran);
  }
  EXPECT_EQ(Rows(), 0);
  EXPECT_EQ(db_.Scalar("SELECT COUNT(*) FROM room_command_log"), 0);
  EXPECT_EQ(im_.Stats().requests, 0u);
  // Just under the limit is accepted.
  const std::string fits = R"({"text":")" + std::string(11000, 'x') + R"("})";
  CommitResult ok = hook->Commit(Command{"cmd-ok", "room-1", "SendGift", "r", 1, "{}"},
                                 {Event{"evt-ok", "RoomGiftSent", 1, 0, fits}});
  EXPECT_EQ(ok.status, CommitStatus::kCommitted) << ok.error.message;
}

TEST_F(HookSyncTest, TheSessionIsStrictSoNothingIsSilentlyTruncated) {
  auto conn = core::MariaDbConnection::Connect(db_.Options());
  ASSERT_TRUE(conn) << conn.error().message;
  auto stmt = (*conn)->Prepared("sql_mode", "SELECT @@SESSION.sql_mode");
  ASSERT_TRUE(stmt) << stmt.error().message;
  ASSERT_TRUE((*stmt)->Execute({}));
  auto rows = (*stmt)->FetchAll();
  ASSERT_TRUE(rows && rows->size() == 1u);
  const std::string mode = (*rows)[0].Str(0);
  EXPECT_NE(mode.find("STRICT_ALL_TABLES"), std::string::npos) << mode;
  auto insert = (*conn)->Prepared(
      "too_long", "INSERT INTO room_command_log (command_id, room_id, command_type, request_id, "
                  "room_seq, payload, created_at_ms) VALUES (?, 'r', 't', 'q', 1, '{}', 0)");
  ASSERT_TRUE(insert) << insert.error().message;
  const std::vector<core::SqlValue> params = {std::string(200, 'c')};
  EXPECT_FALSE((*insert)->Execute(params)) << "a 200-character command_id must not be cut to 128";
  EXPECT_EQ(db_.Scalar("SELECT COUNT(*) FROM room_command_log"), 0);
}

}  // namespace
}  // namespace room_outbox::testing
