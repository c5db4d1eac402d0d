// The hook's commit outcome when the connection fails: a COMMIT or its answer lost (through a
// loopback TCP proxy that drops them, and can refuse new connections), a connection killed while
// idle or mid-transaction. A command that is in room_command_log is never reported kFailed; a
// connection that failed before COMMIT costs a reconnect, not the command. A server switched to
// read-only is read_only_failover_test.cc's (a private server: read_only on the shared one would
// refuse the other tests' least-privilege accounts).
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "room_outbox/hook.h"
#include "support/fake_im_server.h"
#include "support/tcp_proxy.h"
#include "support/test_database.h"
#include "support/wait.h"

namespace room_outbox::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

class CommitOutcomeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(db_.valid());
    ASSERT_TRUE(im_.running()) << im_.start_error();
    db_.Exec(
        "CREATE TABLE room_snapshot (room_id VARCHAR(128) NOT NULL PRIMARY KEY, room_seq BIGINT "
        "NOT NULL) ENGINE=InnoDB");
  }

  std::unique_ptr<Hook> NewHook(const MysqlOptions& mysql) {
    HookOptions options;
    options.mysql = mysql;
    options.tencent_im = im_.ClientOptions();
    options.sync_publish_timeout = milliseconds(500);
    options.node_id = "node-outcome";
    options.log = [this](LogLevel, std::string_view line) { logs_.emplace_back(line); };
    Error error;
    auto hook = CreateHook(options, &error);
    EXPECT_TRUE(hook) << error.message;
    return hook;
  }

  // The test database reached over TCP through `proxy`.
  MysqlOptions ThroughProxy(const TcpProxy& proxy) const {
    MysqlOptions mysql = db_.Options();
    mysql.socket.clear();
    mysql.host = "127.0.0.1";
    mysql.port = proxy.port();
    return mysql;
  }

  static Command GiftCommand(const std::string& id) {
    return Command{id, "room-1", "SendGift", "req-" + id, 1, R"({"gift":"rose"})"};
  }
  static std::vector<Event> GiftEvents(const std::string& id) {
    return {Event{id + "-gift", "RoomGiftSent", 1, 0, R"({"gift":"rose"})"},
            Event{id + "-heat", "RoomHeatChanged", 1, 0, R"({"heat":3})"}};
  }
  // Commits with a snapshot row written by the caller's statements; counts their runs.
  CommitResult Commit(Hook& hook, const std::string& id, int* caller_runs = nullptr) {
    return hook.Commit(GiftCommand(id), GiftEvents(id), [&, id](Transaction& tx) {
      if (caller_runs != nullptr) {
        ++*caller_runs;
      }
      return tx.Execute("INSERT INTO room_snapshot (room_id, room_seq) VALUES (?, 1)", {id});
    });
  }

  int64_t Logged(const std::string& command_id) {
    return db_.Scalar("SELECT COUNT(*) FROM room_command_log WHERE command_id = '" + command_id +
                      "'");
  }
  // The server's id of the one connection to the test database other than db_'s own.
  int64_t HookConnectionId() {
    return db_.Scalar("SELECT id FROM information_schema.processlist WHERE db = '" + db_.name() +
                      "' AND id <> CONNECTION_ID() ORDER BY id DESC LIMIT 1");
  }

  size_t LogLines(const std::string& part) const {
    size_t n = 0;
    for (const std::string& line : logs_) {
      n += line.find(part) != std::string::npos ? 1 : 0;
    }
    return n;
  }

  TestDatabase db_;
  FakeImServer im_;
  std::vector<std::string> logs_;
};

TEST_F(CommitOutcomeTest, ProxyForwardsAnOrdinaryCommit) {
  TcpProxy proxy(TestMysqlSocket());
  ASSERT_TRUE(proxy.running()) << proxy.start_error();
  auto hook = NewHook(ThroughProxy(proxy));
  ASSERT_TRUE(hook);

  CommitResult result = Commit(*hook, "c-plain");

  ASSERT_EQ(result.status, CommitStatus::kCommitted) << result.error.message;
  EXPECT_EQ(result.events[0].state, DeliveryState::kPublished);
  EXPECT_EQ(proxy.commits_dropped(), 0);
  EXPECT_GE(proxy.connections(), 1);
}

TEST_F(CommitOutcomeTest, LostCommitAnswerOfACommittedCommandIsNeverReportedFailed) {
  TcpProxy proxy(TestMysqlSocket());
  ASSERT_TRUE(proxy.running()) << proxy.start_error();
  auto hook = NewHook(ThroughProxy(proxy));
  ASSERT_TRUE(hook);
  proxy.DropReplyToNextCommit();

  CommitResult result = Commit(*hook, "c-lost");

  ASSERT_EQ(proxy.commits_dropped(), 1);
  // The server ran the COMMIT: the command is in the log, so the hook must not say "failed".
  ASSERT_EQ(Logged("c-lost"), 1);
  EXPECT_NE(result.status, CommitStatus::kFailed) << result.error.message;
  EXPECT_TRUE(result.status == CommitStatus::kCommitted || result.status == CommitStatus::kUnknown)
      << static_cast<int>(result.status);
  EXPECT_EQ(db_.Scalar("SELECT COUNT(*) FROM room_snapshot"), 1);
  EXPECT_EQ(LogLines("trying once more"), 0u);  // a lost COMMIT answer is never run again
  if (result.status == CommitStatus::kCommitted) {
    EXPECT_EQ(LogLines("COMMIT answer lost, the command log has it"), 1u);
    // Resolved by the lookup: its rows went on to the sync publish like any commit's.
    ASSERT_EQ(result.events.size(), 2u);
    EXPECT_EQ(result.events[0].state, DeliveryState::kPublished) << result.events[0].error;
    EXPECT_EQ(result.events[1].state, DeliveryState::kSkipped);
    EXPECT_EQ(db_.Scalar("SELECT COUNT(*) FROM room_outbox WHERE status = 'published'"), 2);
  }

  // Asking again with the same command_id tells that it had committed, and writes nothing.
  CommitResult again = Commit(*hook, "c-lost");
  EXPECT_EQ(again.status, CommitStatus::kDuplicate) << again.error.message;
  EXPECT_EQ(db_.Scalar("SELECT COUNT(*) FROM room_outbox"), 2);
  EXPECT_EQ(im_.RequestsFor("c-lost-gift").size(),
            result.status == CommitStatus::kCommitted ? 1u : 0u);
  // The hook goes on working on a new connection.
  EXPECT_EQ(Commit(*hook, "c-after").status, CommitStatus::kCommitted);
}

TEST_F(CommitOutcomeTest, LostCommitAnswerWithTheServerUnreachableIsUnknownUntilAskedAgain) {
  TcpProxy proxy(TestMysqlSocket());
  ASSERT_TRUE(proxy.running()) << proxy.start_error();
  MysqlOptions mysql = ThroughProxy(proxy);
  mysql.connect_timeout = milliseconds(1000);
  auto hook = NewHook(mysql);
  ASSERT_TRUE(hook);
  proxy.DropReplyToNextCommit();
  int runs = 0;

  // The COMMIT's answer is lost and the lookup cannot reach the server either.
  CommitResult result =
      hook->Commit(GiftCommand("c-unknown"), GiftEvents("c-unknown"), [&](Transaction& tx) {
        ++runs;
        if (runs == 1) {
          proxy.RefuseConnections(true);  // from now on the database looks unreachable
        }
        return tx.Execute("INSERT INTO room_snapshot (room_id, room_seq) VALUES (?, 1)",
                          {std::string("c-unknown")});
      });

  ASSERT_EQ(proxy.commits_dropped(), 1);
  EXPECT_EQ(result.status, CommitStatus::kUnknown) << result.error.message;
  EXPECT_NE(result.error.message.find("retry with the same command_id"), std::string::npos)
      << result.error.message;
  EXPECT_TRUE(result.events.empty());
  EXPECT_EQ(runs, 1);  // a COMMIT that may have committed is never run again by the hook
  // It had committed: the server received the COMMIT, whose answer the proxy dropped; the server
  // may finish it after the hook gave up, so the row is waited for.
  EXPECT_TRUE(Eventually([&] { return Logged("c-unknown") == 1; }, seconds(10)));
  EXPECT_TRUE(im_.RequestsFor("c-unknown-gift").empty());  // the relay's to deliver

  // Reachable again: asking with the same command_id tells that it had committed.
  proxy.RefuseConnections(false);
  CommitResult again = Commit(*hook, "c-unknown");
  EXPECT_EQ(again.status, CommitStatus::kDuplicate) << again.error.message;
  EXPECT_EQ(db_.Scalar("SELECT COUNT(*) FROM room_outbox WHERE command_id = 'c-unknown'"), 2);
}

TEST_F(CommitOutcomeTest, CommitThatNeverReachedTheServerIsReportedFailedNotUnknown) {
  TcpProxy proxy(TestMysqlSocket());
  ASSERT_TRUE(proxy.running()) << proxy.start_error();
  auto hook = NewHook(ThroughProxy(proxy));
  ASSERT_TRUE(hook);
  proxy.DropNextCommit();

  CommitResult result = Commit(*hook, "c-dropped");

  ASSERT_EQ(proxy.commits_dropped(), 1);
  // The server rolled back when the connection closed; the lookup's locking read waits for that
  // and finds nothing.
  EXPECT_EQ(result.status, CommitStatus::kFailed) << result.error.message;
  EXPECT_EQ(result.error.code, ErrorCode::kUnavailable);
  EXPECT_EQ(Logged("c-dropped"), 0);
  EXPECT_EQ(db_.Scalar("SELECT COUNT(*) FROM room_outbox"), 0);
  EXPECT_TRUE(im_.RequestsFor("c-dropped-gift").empty());

  CommitResult again = Commit(*hook, "c-dropped");
  EXPECT_EQ(again.status, CommitStatus::kCommitted) << again.error.message;
  EXPECT_EQ(Logged("c-dropped"), 1);
}

TEST_F(CommitOutcomeTest, KilledIdleConnectionDoesNotFailTheNextCommand) {
  auto hook = NewHook(db_.Options());
  ASSERT_TRUE(hook);
  ASSERT_EQ(Commit(*hook, "c-1").status, CommitStatus::kCommitted);
  const int64_t idle = HookConnectionId();
  ASSERT_GT(idle, 0);
  db_.Exec("KILL " + std::to_string(idle));

  int caller_runs = 0;
  CommitResult result = Commit(*hook, "c-2", &caller_runs);

  ASSERT_EQ(result.status, CommitStatus::kCommitted) << result.error.message;
  EXPECT_EQ(result.events[0].state, DeliveryState::kPublished);
  EXPECT_EQ(Logged("c-2"), 1);
  EXPECT_NE(HookConnectionId(), idle);
  // The stale connection failed before any write: one transparent retry on a new connection.
  EXPECT_EQ(LogLines("trying once more"), 1u);
  EXPECT_EQ(caller_runs, 1);
}

TEST_F(CommitOutcomeTest, ConnectionKilledMidTransactionIsRetriedOnceAndCommitsOnce) {
  auto hook = NewHook(db_.Options());
  ASSERT_TRUE(hook);
  ASSERT_EQ(Commit(*hook, "c-1").status, CommitStatus::kCommitted);
  int runs = 0;
  CommitResult result =
      hook->Commit(GiftCommand("c-2"), GiftEvents("c-2"), [&](Transaction& tx) -> Status {
        if (++runs == 1) {
          db_.Exec("KILL " + std::to_string(HookConnectionId()));
        }
        return tx.Execute("INSERT INTO room_snapshot (room_id, room_seq) VALUES (?, 2)",
                          {std::string("c-2")});
      });

  ASSERT_EQ(result.status, CommitStatus::kCommitted) << result.error.message;
  EXPECT_EQ(runs, 2);  // the caller's statements ran again on the retry (documented)
  EXPECT_EQ(Logged("c-2"), 1);
  EXPECT_EQ(db_.Scalar("SELECT COUNT(*) FROM room_snapshot WHERE room_id = 'c-2'"), 1);
  EXPECT_EQ(db_.Scalar("SELECT COUNT(*) FROM room_outbox WHERE command_id = 'c-2'"), 2);
}

}  // namespace
}  // namespace room_outbox::testing
