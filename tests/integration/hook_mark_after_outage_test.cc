// Marks the hook could not write are written when the connection is back: the real hook
// (CreateHook) reaching the test MariaDB over TCP through a proxy, the fake IM standing in for
// Tencent. While IM handles a sync publish, the stand-in's request hook kills the hook's
// connections on the server and has the proxy refuse new ones, so IM's OK arrives to a hook whose
// mark fails. The mark is kept; once connections are accepted again it is written (inline: by the
// next Commit, before its transaction; background: by the hook's thread, with no further commit)
// with the hook's own result, IM is never asked a second time for that row, and a relay started
// after the row's lease would have ended sends nothing twice.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "room_outbox/hook.h"
#include "support/fake_im_server.h"
#include "support/mysql_admin.h"
#include "support/relay_process.h"
#include "support/tcp_proxy.h"
#include "support/test_database.h"
#include "support/wait.h"

namespace room_outbox::testing {
namespace {

using std::chrono::milliseconds;

class HookMarkAfterOutageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(db_.valid());
    ASSERT_TRUE(im_.running()) << im_.start_error();
    ASSERT_TRUE(proxy_.running()) << proxy_.start_error();
    std::string error;
    admin_ = ConnectAsRoot(TestMysqlSocket(), error);
    ASSERT_TRUE(admin_) << error;
    own_connection_ = db_.Scalar("SELECT CONNECTION_ID()");
  }

  std::unique_ptr<Hook> NewHook(SyncPublishMode mode) {
    HookOptions options;
    options.mysql = db_.Options();
    options.mysql.socket.clear();
    options.mysql.host = "127.0.0.1";
    options.mysql.port = proxy_.port();
    options.tencent_im = im_.ClientOptions();
    options.sync_publish_timeout = milliseconds(500);
    options.sync_publish = mode;
    options.node_id = "node-late-marks";
    Error error;
    auto hook = CreateHook(options, &error);
    EXPECT_TRUE(hook) << error.message;
    return hook;
  }

  // While IM handles `event_id`'s request (before it answers): the hook's connections are killed
  // on the server and the proxy refuses new ones, as a failover would.
  void CutTheDatabaseWhilePublishing(const std::string& event_id) {
    im_.SetFaultFunction(
        [this, event_id](const FakeImRequest& request) -> std::optional<FakeImFault> {
          if (request.event_id == event_id && !cut_.exchange(true)) {
            proxy_.RefuseConnections(true);
            KillHookConnections();
          }
          return std::nullopt;  // answered OK as usual
        });
  }

  // Every connection to the test database but db_'s own (the admin connection names none).
  void KillHookConnections() {
    std::vector<SqlRow> ids;
    const std::string error =
        RunSql(admin_.get(),
               "SELECT id FROM information_schema.processlist WHERE db = '" + db_.name() +
                   "' AND id <> " + std::to_string(own_connection_),
               ids);
    if (!error.empty()) {
      ADD_FAILURE() << error;
      return;
    }
    for (const SqlRow& row : ids) {
      std::vector<SqlRow> none;
      RunSql(admin_.get(), "KILL " + row[0].value_or("0"), none);
      ++killed_;
    }
  }

  static Command GiftCommand(const std::string& id) {
    return Command{id, "room-1", "SendGift", "req-" + id, 1, R"({"gift":"rose"})"};
  }
  static std::vector<Event> GiftEvents(const std::string& id) {
    return {Event{id + "-gift", "RoomGiftSent", 1, 0, R"({"gift":"rose"})"}};
  }

  std::string Column(const std::string& event_id, const std::string& column) {
    auto rows =
        db_.Query("SELECT " + column + " FROM room_outbox WHERE event_id = '" + event_id + "'");
    return rows.empty() || rows[0].empty() ? "<no row>" : rows[0][0].value_or("NULL");
  }

  // Waits until the server's clock has passed the row's lease (its next_attempt_at_ms), so a relay
  // would take the row if it were still pending.
  bool LeasePassed(const std::string& event_id) {
    return Eventually(
        [&] {
          return db_.Scalar("SELECT COUNT(*) FROM room_outbox WHERE event_id = '" + event_id +
                            "' AND next_attempt_at_ms <= UNIX_TIMESTAMP(NOW(3)) * 1000") == 1;
        },
        milliseconds(15000));
  }

  // A relay draining what is due once; it must find nothing to send.
  void RelaySendsNothing() {
    const size_t before = im_.Stats().requests;
    RelayProcessOptions options;
    options.args = {"--once"};
    RelayProcess relay(db_, im_, options);
    ASSERT_TRUE(relay.Start());
    auto exit = relay.Wait(milliseconds(30000));
    ASSERT_TRUE(exit) << relay.StderrTail();
    EXPECT_EQ(exit->exit_code, 0) << Describe(*exit) << "\n" << relay.StderrTail();
    EXPECT_EQ(im_.Stats().requests, before) << relay.StderrTail();
    EXPECT_EQ(im_.Stats().duplicates, 0u);
  }

  // The row the mark was cut off from: published with the hook's result, sent once.
  void ExpectPublishedOnce(const std::string& event_id) {
    EXPECT_EQ(Column(event_id, "status"), "published");
    EXPECT_EQ(Column(event_id, "last_error"), "NULL");
    EXPECT_EQ(Column(event_id, "retry_count"), "0");
    EXPECT_NE(Column(event_id, "published_at_ms"), "NULL");
    EXPECT_EQ(Column(event_id, "claim_token"), "NULL");
    EXPECT_EQ(im_.RequestsFor(event_id).size(), 1u);
  }

  TestDatabase db_;
  FakeImServer im_;
  TcpProxy proxy_{TestMysqlSocket()};
  core::MysqlPtr admin_;  // used by the stand-in's handler thread only, once the test armed it
  int64_t own_connection_ = 0;
  std::atomic<bool> cut_{false};
  std::atomic<int> killed_{0};
};

TEST_F(HookMarkAfterOutageTest, InlineTheNextCommitWritesTheMarkALostConnectionCutOff) {
  auto hook = NewHook(SyncPublishMode::kInline);
  ASSERT_TRUE(hook);
  ASSERT_EQ(hook->Commit(GiftCommand("c-1"), GiftEvents("c-1")).status, CommitStatus::kCommitted);
  CutTheDatabaseWhilePublishing("c-2-gift");

  CommitResult cut = hook->Commit(GiftCommand("c-2"), GiftEvents("c-2"));
  ASSERT_EQ(cut.status, CommitStatus::kCommitted) << cut.error.message;
  EXPECT_EQ(cut.events[0].state, DeliveryState::kPublished);
  ASSERT_GE(killed_.load(), 1);
  EXPECT_EQ(hook->Metrics().late_marks_waiting, 1u);
  EXPECT_EQ(Column("c-2-gift", "status"), "pending");

  // Still down: the late mark is tried once and kept; the Commit fails on its own account.
  CommitResult down = hook->Commit(GiftCommand("c-3"), GiftEvents("c-3"));
  EXPECT_EQ(down.status, CommitStatus::kFailed);
  EXPECT_EQ(hook->Metrics().late_marks_waiting, 1u);

  proxy_.RefuseConnections(false);
  CommitResult back = hook->Commit(GiftCommand("c-4"), GiftEvents("c-4"));
  ASSERT_EQ(back.status, CommitStatus::kCommitted) << back.error.message;
  EXPECT_EQ(back.events[0].state, DeliveryState::kPublished);
  const HookMetrics m = hook->Metrics();
  EXPECT_EQ(m.late_marks_waiting, 0u);
  EXPECT_EQ(m.late_marks_written, 1u);
  EXPECT_EQ(m.late_marks_dropped, 0u);
  ExpectPublishedOnce("c-2-gift");
  EXPECT_EQ(Column("c-4-gift", "status"), "published");

  ASSERT_TRUE(LeasePassed("c-2-gift"));
  RelaySendsNothing();
  EXPECT_EQ(im_.RequestsFor("c-2-gift").size(), 1u);
}

TEST_F(HookMarkAfterOutageTest,
       BackgroundItsThreadWritesTheMarkWhenTheConnectionIsBackWithoutACommit) {
  auto hook = NewHook(SyncPublishMode::kBackground);
  ASSERT_TRUE(hook);
  ASSERT_EQ(hook->Commit(GiftCommand("c-1"), GiftEvents("c-1")).status, CommitStatus::kCommitted);
  ASSERT_TRUE(
      Eventually([&] { return Column("c-1-gift", "status") == "published"; }, milliseconds(10000)));
  CutTheDatabaseWhilePublishing("c-2-gift");

  CommitResult queued = hook->Commit(GiftCommand("c-2"), GiftEvents("c-2"));
  ASSERT_EQ(queued.status, CommitStatus::kCommitted) << queued.error.message;
  EXPECT_EQ(queued.events[0].state, DeliveryState::kQueued);
  ASSERT_TRUE(
      Eventually([&] { return hook->Metrics().late_marks_waiting == 1; }, milliseconds(10000)));
  ASSERT_GE(killed_.load(), 1);
  EXPECT_EQ(Column("c-2-gift", "status"), "pending");

  proxy_.RefuseConnections(false);  // no Commit from here on: the thread writes it
  ASSERT_TRUE(
      Eventually([&] { return hook->Metrics().late_marks_written == 1; }, milliseconds(40000)));
  EXPECT_EQ(hook->Metrics().late_marks_waiting, 0u);
  ExpectPublishedOnce("c-2-gift");

  ASSERT_TRUE(LeasePassed("c-2-gift"));
  RelaySendsNothing();
  EXPECT_EQ(im_.RequestsFor("c-2-gift").size(), 1u);
}

}  // namespace
}  // namespace room_outbox::testing
