// A failover that keeps the address and lands on a server that is read-only for a while
// (`SET GLOBAL read_only = ON` on a private MariaDB, least-privilege accounts of docs/grants.sql,
// which read_only refuses): a real outbox-relay process, over the unix socket and over TCP,
// claims and marks nothing, changes no row and sends nothing while it is read-only, says so on
// /readyz, in room_outbox_db_read_only and once in its log, and delivers every row once by
// itself when the server accepts writes again. The hook's Commit fails cleanly naming read-only,
// also when the server turns read-only under its open transaction (the COMMIT refused), writes
// nothing, and commits once the server is writable.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "room_outbox/hook.h"
#include "support/failover_server.h"
#include "support/fake_im_server.h"
#include "support/loopback_http.h"
#include "support/relay_process.h"
#include "support/tcp_proxy.h"
#include "support/wait.h"

namespace room_outbox::testing {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using std::chrono::seconds;
using ::testing::HasSubstr;
using ::testing::Not;

// The value text of an unlabelled sample `name` in a Prometheus exposition, or "".
std::string Sample(const std::string& exposition, const std::string& name) {
  std::istringstream in(exposition);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(name + " ", 0) == 0) return line.substr(name.size() + 1);
  }
  return "";
}

enum class Transport { kSocket, kTcp };

std::string TransportName(const ::testing::TestParamInfo<Transport>& info) {
  return info.param == Transport::kSocket ? "Socket" : "Tcp";
}

class ReadOnlyFailoverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(im_.running()) << im_.start_error();
    char tmpl[] = "/tmp/room-outbox-read-only-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    server_ = std::make_unique<FailoverServer>(dir_ / "mariadb", "read_only_failover");
    ASSERT_TRUE(server_->Start());
  }
  void TearDown() override {
    relay_.reset();
    proxy_.reset();
    server_.reset();
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }

  // `role`'s account, over the socket or through a loopback TCP proxy in front of it.
  MysqlOptions Reach(const std::string& role, Transport transport) {
    MysqlOptions mysql = server_->As(role);
    if (transport == Transport::kTcp) {
      if (!proxy_) proxy_ = std::make_unique<TcpProxy>(server_->socket());
      EXPECT_TRUE(proxy_->running()) << proxy_->start_error();
      mysql.socket.clear();
      mysql.host = "127.0.0.1";
      mysql.port = proxy_->port();
    }
    return mysql;
  }

  // A started relay as the relay account, with a metrics listener on metrics_port_.
  RelayProcess& StartRelay(Transport transport) {
    const MysqlOptions mysql = Reach("relay", transport);
    RelayProcessOptions options;
    options.node_id = "read-only-relay";
    options.mysql = {{"password_file", "\"mysql-password\""}, {"connect_timeout", "\"2s\""}};
    if (transport == Transport::kTcp) {
      options.mysql["host"] = "\"127.0.0.1\"";
      options.mysql["port"] = std::to_string(mysql.port);
    }
    options.outbox_worker = {{"poll_interval", "\"200ms\""}, {"max_in_flight", "16"}};
    relay_ = std::make_unique<RelayProcess>(mysql, im_, options);
    std::ofstream(relay_->dir() + "/mysql-password") << kFailoverPassword;
    metrics_port_ = FreePort();
    std::ofstream(relay_->config_path(), std::ios::app)
        << "\n[metrics]\nlisten = \"127.0.0.1:" << metrics_port_ << "\"\n";
    EXPECT_TRUE(relay_->Start());
    return *relay_;
  }

  HttpAnswer Readyz() const { return Get(metrics_port_, "/readyz"); }
  std::string Metric(const std::string& name) const {
    return Sample(Get(metrics_port_, "/metrics").body, name);
  }

  std::unique_ptr<Hook> NewHook(const MysqlOptions& mysql) {
    HookOptions options;
    options.mysql = mysql;
    options.tencent_im = im_.ClientOptions();
    options.sync_publish_timeout = seconds(2);
    options.node_id = "read-only-hook";
    options.log = [this](LogLevel, std::string_view line) { logs_.emplace_back(line); };
    Error error;
    auto hook = CreateHook(options, &error);
    EXPECT_TRUE(hook) << error.message;
    return hook;
  }
  static CommitResult Commit(Hook& hook, const std::string& id) {
    return hook.Commit(Command{id, "room-ro", "SendGift", "req-" + id, 1, "{}"},
                       {Event{id + "-gift", "RoomGiftSent", 1, 0, R"({"gift":"rose"})"}});
  }
  size_t LogLines(const std::string& part) const {
    size_t n = 0;
    for (const std::string& line : logs_) n += line.find(part) != std::string::npos ? 1 : 0;
    return n;
  }
  int64_t OutboxRowsOf(const std::string& command_id) const {
    return server_->Scalar("SELECT COUNT(*) FROM room_outbox WHERE command_id = '" + command_id +
                           "'");
  }

  FakeImServer im_;
  fs::path dir_;
  std::unique_ptr<FailoverServer> server_;
  std::unique_ptr<TcpProxy> proxy_;
  std::unique_ptr<RelayProcess> relay_;
  int metrics_port_ = 0;
  std::vector<std::string> logs_;
};

class ReadOnlyRelayTest : public ReadOnlyFailoverTest,
                          public ::testing::WithParamInterface<Transport> {};

TEST_P(ReadOnlyRelayTest, ClaimsNothingWhileReadOnlyAndDeliversEveryRowOnceAfter) {
  constexpr int kRows = 30;
  RelayProcess& relay = StartRelay(GetParam());
  ASSERT_TRUE(Eventually([&] { return Readyz().status == 200; }, seconds(30)))
      << relay.StderrTail();

  server_->SetReadOnly(true);
  server_->InsertRows("ro", kRows, 6);  // root writes through read_only
  const std::string before = server_->RowStates();

  ASSERT_TRUE(
      Eventually([&] { return Readyz().body.find("database is read-only") != std::string::npos; },
                 seconds(30)))
      << Readyz().body << "\n"
      << relay.StderrTail();
  const HttpAnswer readyz = Readyz();
  std::printf("read-only: /readyz %d %s", readyz.status, readyz.body.c_str());
  EXPECT_EQ(readyz.status, 503);
  EXPECT_THAT(readyz.body, HasSubstr("not ready: "));
  EXPECT_THAT(readyz.body, HasSubstr("--read-only option"));  // the server's own words
  EXPECT_THAT(readyz.body, HasSubstr("[errno 1290]"));
  EXPECT_EQ(Metric("room_outbox_db_read_only"), "1");
  EXPECT_EQ(Metric("room_outbox_db_up"), "0");
  // Several rounds refused, each backing off (at warn for the 1st, 2nd and 4th of them): the
  // cause is logged once for all of them.
  ASSERT_TRUE(Eventually([&] { return relay.CountLogLines({"database error: backing off"}) >= 3; },
                         seconds(60)))
      << relay.StderrTail();
  EXPECT_EQ(relay.CountLogLines({"database is read-only: nothing is claimed or marked"}), 1u)
      << relay.StderrTail();
  EXPECT_EQ(relay.CountLogLines({"outbox claim failed", "database is read-only"}), 1u)
      << relay.StderrTail();
  EXPECT_EQ(server_->RowStates(), before) << "a row changed while the server was read-only";
  EXPECT_EQ(im_.Stats().requests, 0u) << "an IM request for a row that was never leased";
  EXPECT_EQ(Get(metrics_port_, "/healthz").status, 200) << "the loop is alive, waiting";

  server_->SetReadOnly(false);
  ASSERT_TRUE(Eventually([&] { return server_->Pending() == 0; }, seconds(60)))
      << relay.StderrTail();
  const FakeImStats stats = im_.Stats();
  EXPECT_EQ(stats.unique_event_ids, static_cast<size_t>(kRows));
  EXPECT_EQ(stats.duplicates, 0u);
  ASSERT_TRUE(Eventually([&] { return Readyz().status == 200; }, seconds(30))) << Readyz().body;
  EXPECT_EQ(Metric("room_outbox_db_read_only"), "0");
  EXPECT_EQ(Metric("room_outbox_db_up"), "1");
  EXPECT_EQ(relay.CountLogLines({"database accepts writes again", "read_only_ms="}), 1u)
      << relay.StderrTail();
  auto exit = relay.Stop(seconds(20));
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->exit_code, 0) << Describe(*exit) << "\n" << relay.StderrTail();
}

INSTANTIATE_TEST_SUITE_P(Transports, ReadOnlyRelayTest,
                         ::testing::Values(Transport::kSocket, Transport::kTcp), TransportName);

TEST_F(ReadOnlyFailoverTest, HookCommitIsRefusedNamingReadOnlyAndCommitsWhenWritable) {
  auto hook = NewHook(server_->As("hook"));
  ASSERT_TRUE(hook);
  ASSERT_EQ(Commit(*hook, "c-1").status, CommitStatus::kCommitted);

  server_->SetReadOnly(true);
  CommitResult refused = Commit(*hook, "c-2");

  EXPECT_EQ(refused.status, CommitStatus::kFailed);
  EXPECT_EQ(refused.error.code, ErrorCode::kUnavailable) << refused.error.message;
  EXPECT_THAT(refused.error.message, HasSubstr("database is read-only"));
  EXPECT_THAT(refused.error.message, HasSubstr("[errno 1290]"));
  EXPECT_EQ(server_->Logged("c-2"), 0);
  EXPECT_EQ(OutboxRowsOf("c-2"), 0);
  EXPECT_EQ(LogLines("trying once more"), 1u);  // on a new connection: a failover is followed
  EXPECT_TRUE(im_.RequestsFor("c-2-gift").empty());

  // Writable again: the same hook, no restart.
  server_->SetReadOnly(false);
  CommitResult accepted = Commit(*hook, "c-2");
  ASSERT_EQ(accepted.status, CommitStatus::kCommitted) << accepted.error.message;
  EXPECT_EQ(server_->Logged("c-2"), 1);
  EXPECT_EQ(OutboxRowsOf("c-2"), 1);
}

TEST_F(ReadOnlyFailoverTest, HookCommitRefusedByAServerTurnedReadOnlyUnderItIsFailedNotLost) {
  auto hook = NewHook(Reach("hook", Transport::kTcp));
  ASSERT_TRUE(hook);
  // The server turns read-only while the command's transaction is open, before its COMMIT.
  proxy_->BeforeCommit(1, [this] { server_->SetReadOnly(true); });

  CommitResult refused = Commit(*hook, "c-3");

  // The server answered the COMMIT: nothing was committed, so no lookup (whose transaction
  // would send a COMMIT of its own) but one more try, refused at its first write.
  EXPECT_EQ(proxy_->commits_seen(), 1);
  EXPECT_EQ(LogLines("trying once more"), 1u);
  EXPECT_EQ(refused.status, CommitStatus::kFailed);
  EXPECT_EQ(refused.error.code, ErrorCode::kUnavailable) << refused.error.message;
  EXPECT_THAT(refused.error.message, HasSubstr("database is read-only"));
  EXPECT_THAT(refused.error.message, Not(HasSubstr("lost COMMIT answer")));
  EXPECT_EQ(LogLines("COMMIT answer lost"), 0u);
  EXPECT_EQ(server_->Logged("c-3"), 0);
  EXPECT_EQ(OutboxRowsOf("c-3"), 0);

  server_->SetReadOnly(false);
  CommitResult accepted = Commit(*hook, "c-3");
  ASSERT_EQ(accepted.status, CommitStatus::kCommitted) << accepted.error.message;
  EXPECT_EQ(server_->Logged("c-3"), 1);
}

}  // namespace
}  // namespace room_outbox::testing
