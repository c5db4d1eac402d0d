// A connection cut exactly while a COMMIT is in flight (tests/support/tcp_proxy.h drops the Nth
// COMMIT the clients send, either before forwarding it, so the server rolls back, or right after,
// so the server commits and the client never hears it), for a real outbox-relay process over TCP:
// its claim's COMMIT and the COMMIT of its failed-attempt marks. No row is lost, none is sent
// twice, a lease is either taken and used or given back at once (never left to run out), and an
// attempt is recorded at most once. And the hook's lost COMMIT answer when the address now leads
// to another, read-only server (a failover's replica that has not applied the command): the
// outcome is unknown, never "failed".
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "room_outbox/hook.h"
#include "support/failover_server.h"
#include "support/fake_im_server.h"
#include "support/relay_process.h"
#include "support/tcp_proxy.h"
#include "support/wait.h"

namespace room_outbox::testing {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using std::chrono::seconds;

enum class Cut { kBeforeServer, kAfterServer };

std::string CutName(const ::testing::TestParamInfo<Cut>& info) {
  return info.param == Cut::kBeforeServer ? "RolledBack" : "Committed";
}

class CutCommitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(im_.running()) << im_.start_error();
    char tmpl[] = "/tmp/room-outbox-cut-commit-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    primary_ = std::make_unique<FailoverServer>(dir_ / "primary", "cut_commit");
    ASSERT_TRUE(primary_->Start());
    proxy_ = std::make_unique<TcpProxy>(primary_->socket());
    ASSERT_TRUE(proxy_->running()) << proxy_->start_error();
  }
  void TearDown() override {
    relay_.reset();
    proxy_.reset();
    replica_.reset();
    primary_.reset();
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }

  // `role`'s account through the proxy.
  MysqlOptions ThroughProxy(const std::string& role) const {
    MysqlOptions mysql = primary_->As(role);
    mysql.socket.clear();
    mysql.host = "127.0.0.1";
    mysql.port = proxy_->port();
    return mysql;
  }

  RelayProcess& StartRelay(std::map<std::string, std::string> worker,
                           std::map<std::string, std::string> tencent_im = {}) {
    RelayProcessOptions options;
    options.node_id = "cut-commit-relay";
    options.mysql = {{"password_file", "\"mysql-password\""},
                     {"connect_timeout", "\"2s\""},
                     {"host", "\"127.0.0.1\""},
                     {"port", std::to_string(proxy_->port())}};
    options.outbox_worker = {
        {"poll_interval", "\"200ms\""}, {"batch_size", "100"}, {"max_in_flight", "16"}};
    for (auto& [key, value] : worker) options.outbox_worker[key] = value;
    options.tencent_im = std::move(tencent_im);
    relay_ = std::make_unique<RelayProcess>(ThroughProxy("relay"), im_, options);
    std::ofstream(relay_->dir() + "/mysql-password") << kFailoverPassword;
    EXPECT_TRUE(relay_->Start());
    return *relay_;
  }

  void Arm(Cut cut, int nth) {
    if (cut == Cut::kBeforeServer) {
      proxy_->DropCommit(nth);
    } else {
      proxy_->DropReplyToCommit(nth);
    }
  }

  FakeImServer im_;
  fs::path dir_;
  std::unique_ptr<FailoverServer> primary_;
  std::unique_ptr<FailoverServer> replica_;
  std::unique_ptr<TcpProxy> proxy_;
  std::unique_ptr<RelayProcess> relay_;
};

class CutRelayCommitTest : public CutCommitTest, public ::testing::WithParamInterface<Cut> {};

TEST_P(CutRelayCommitTest, ClaimCommitCutLosesNoRowAndWaitsForNoLease) {
  constexpr int kRows = 20;
  primary_->InsertRows("claim", kRows, 4);
  // The relay's first COMMIT is its first claim's: the start sends none (schema check, node
  // lock and its release of earlier leases are single statements).
  Arm(GetParam(), 1);
  // A lease far longer than the test may wait: a lease left on the server unknown to the relay
  // would hold its rows past the end of the test.
  RelayProcess& relay = StartRelay({{"lease", "\"300s\""}});

  ASSERT_TRUE(Eventually([&] { return proxy_->commits_dropped() == 1; }, seconds(30)))
      << relay.StderrTail();
  ASSERT_TRUE(Eventually([&] { return primary_->Pending() == 0; }, seconds(60)))
      << primary_->RowStates() << relay.StderrTail();
  const FakeImStats stats = im_.Stats();
  EXPECT_EQ(stats.unique_event_ids, static_cast<size_t>(kRows));
  EXPECT_EQ(stats.duplicates, 0u);
  EXPECT_EQ(relay.CountLogLines({"outbox claim failed"}), 1u) << relay.StderrTail();
  EXPECT_EQ(primary_->Scalar("SELECT COUNT(*) FROM room_outbox WHERE status = 'published' AND "
                             "retry_count = 0 AND claim_token IS NULL"),
            kRows);
  auto exit = relay.Stop(seconds(20));
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->exit_code, 0) << Describe(*exit) << "\n" << relay.StderrTail();
}

TEST_P(CutRelayCommitTest, FailedMarksCommitCutRecordsEachAttemptAtMostOnce) {
  constexpr int kRows = 6;
  // One room's six rows in one message: one answer decides them all, so their six failed
  // attempts are marked together, in one transaction, whatever the marks' batching.
  primary_->InsertRows("mark", kRows, 1);
  im_.PushFault(FakeImFault::ImError(10002));  // the first message fails, the resend is taken
  // COMMIT 1: the claim. COMMIT 2: the six failed attempts.
  Arm(GetParam(), 2);
  RelayProcess& relay = StartRelay({{"lease", "\"3s\""}, {"publish_timeout", "\"1s\""}},
                                   {{"pack_max_events", std::to_string(kRows)}});

  ASSERT_TRUE(Eventually([&] { return proxy_->commits_dropped() == 1; }, seconds(30)))
      << relay.StderrTail();
  ASSERT_TRUE(Eventually([&] { return primary_->Pending() == 0; }, seconds(90)))
      << primary_->RowStates() << relay.StderrTail();
  EXPECT_EQ(relay.CountLogLines({"marking rows failed failed"}), 1u) << relay.StderrTail();
  const FakeImStats stats = im_.Stats();
  EXPECT_EQ(stats.unique_event_ids, static_cast<size_t>(kRows));
  EXPECT_EQ(stats.duplicates, 0u);
  // Rolled back: the relay kept the attempts it could not write and wrote them when the server
  // answered again. Committed: that second write finds the rows marked already (the token is
  // gone) and changes nothing. Either way the attempt is recorded once, never twice.
  const int64_t recorded = 1;
  EXPECT_EQ(primary_->Scalar("SELECT COUNT(*) FROM room_outbox WHERE status = 'published' AND "
                             "claim_token IS NULL AND retry_count = " +
                             std::to_string(recorded)),
            kRows)
      << primary_->RowStates();
  auto exit = relay.Stop(seconds(20));
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->exit_code, 0) << Describe(*exit) << "\n" << relay.StderrTail();
}

INSTANTIATE_TEST_SUITE_P(Cuts, CutRelayCommitTest,
                         ::testing::Values(Cut::kBeforeServer, Cut::kAfterServer), CutName);

TEST_F(CutCommitTest, HookLostCommitAnswerWithTheAddressOnAReadOnlyReplicaIsUnknown) {
  // The failover's target: the same schema and accounts, read-only, without the command.
  replica_ = std::make_unique<FailoverServer>(dir_ / "replica", "cut_commit");
  ASSERT_TRUE(replica_->Start());
  replica_->SetReadOnly(true);
  HookOptions options;
  options.mysql = ThroughProxy("hook");
  options.tencent_im = im_.ClientOptions();
  options.node_id = "cut-commit-hook";
  std::vector<std::string> logs;
  options.log = [&logs](LogLevel, std::string_view line) { logs.emplace_back(line); };
  Error error;
  auto hook = CreateHook(options, &error);
  ASSERT_TRUE(hook) << error.message;
  // The COMMIT reaches the primary, its answer is lost, and the address moves to the replica.
  proxy_->DropReplyToCommit(1);
  proxy_->BeforeCommit(1, [this] { proxy_->SetUpstream(replica_->socket()); });
  const Command command{"c-moved", "room-moved", "SendGift", "req-moved", 1, "{}"};
  const std::vector<Event> events = {Event{"c-moved-gift", "RoomGiftSent", 1, 0, "{}"}};

  CommitResult result = hook->Commit(command, events);

  ASSERT_EQ(proxy_->commits_dropped(), 1);
  ASSERT_TRUE(Eventually([&] { return primary_->Logged("c-moved") == 1; }, seconds(10)))
      << "the primary committed it";
  EXPECT_EQ(replica_->Logged("c-moved"), 0);
  // Not on the read-only server the lookup reached, but committed elsewhere: never "failed".
  EXPECT_EQ(result.status, CommitStatus::kUnknown) << result.error.message;
  EXPECT_NE(result.error.message.find("read-only server"), std::string::npos)
      << result.error.message;
  EXPECT_NE(result.error.message.find("retry with the same command_id"), std::string::npos);

  // The failover settles on the primary: the same command_id tells it had committed.
  proxy_->SetUpstream(primary_->socket());
  CommitResult again = hook->Commit(command, events);
  EXPECT_EQ(again.status, CommitStatus::kDuplicate) << again.error.message;
  EXPECT_EQ(primary_->Scalar("SELECT COUNT(*) FROM room_outbox WHERE command_id = 'c-moved'"), 1);
}

}  // namespace
}  // namespace room_outbox::testing
