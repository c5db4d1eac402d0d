// The built outbox-relay binary as a process, against the test MariaDB and a loopback stand-in
// for Tencent IM: --once exit codes, SIGTERM during a slow publish, kill -9 then restart, and a
// MariaDB restart under a running relay (on a private server of its own, so the shared test
// server is never stopped).
#include <mysql.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/fd.h"
#include "store/mariadb_relay_store.h"
#include "support/fake_im_server.h"
#include "support/private_mariadb.h"
#include "support/relay_process.h"
#include "support/test_database.h"
#include "support/test_rows.h"
#include "support/wait.h"

namespace room_outbox::testing {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using std::chrono::seconds;
using Clock = std::chrono::steady_clock;

fs::path MakeTempDir(const char* prefix) {
  std::string tmpl = std::string("/tmp/") + prefix + "-XXXXXX";
  char* made = mkdtemp(tmpl.data());
  EXPECT_NE(made, nullptr);
  return made != nullptr ? fs::path(made) : fs::path();
}

int64_t NowMs() {
  return std::chrono::duration_cast<milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The relay these tests run: node id "relay-process-test", debug log, a 2s connect timeout, and
// [outbox_worker] poll_interval 200ms, batch_size 100, publish_timeout 2s, fixed_interval
// retries, lease 10s, max_in_flight 16, no per-room pacing. Tests override single keys.
RelayProcessOptions BaseOptions() {
  RelayProcessOptions options;
  options.node_id = "relay-process-test";
  options.log_level = "debug";
  options.mysql = {{"connect_timeout", "\"2s\""}};
  options.outbox_worker = {{"poll_interval", "\"200ms\""},
                           {"batch_size", "100"},
                           {"publish_timeout", "\"2s\""},
                           {"retry_strategy", "\"fixed_interval\""},
                           {"lease", "\"10s\""},
                           {"max_in_flight", "16"},
                           {"room_min_interval", "\"0ms\""}};
  return options;
}

RelayProcessOptions OnceOptions() {
  RelayProcessOptions options = BaseOptions();
  options.args = {"--once"};
  return options;
}

class RelayProcessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(fs::exists(RelayProcess::BinaryPath()))
        << RelayProcess::BinaryPath() << " is not built";
    ASSERT_TRUE(im_.running()) << im_.start_error();
    dir_ = MakeTempDir("relay-process-test");
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  // A started relay against `mysql` and the fake IM server (a failure to start fails the test).
  std::unique_ptr<RelayProcess> Start(const MysqlOptions& mysql, RelayProcessOptions options) {
    auto relay = std::make_unique<RelayProcess>(mysql, im_, std::move(options));
    EXPECT_TRUE(relay->Start());
    return relay;
  }

  FakeImServer im_;
  fs::path dir_;
};

class RelayProcessDbTest : public RelayProcessTest {
 protected:
  void SetUp() override {
    RelayProcessTest::SetUp();
    ASSERT_TRUE(db_.valid());
  }
  void Insert(const std::string& prefix, int count, int rooms, int64_t due_ms = 0) {
    for (const std::string& sql : PendingRowsSql(prefix, count, rooms, due_ms)) db_.Exec(sql);
  }
  int64_t Count(const std::string& where) {
    return db_.Scalar("SELECT COUNT(*) FROM room_outbox WHERE " + where);
  }

  TestDatabase db_;
};

TEST_F(RelayProcessDbTest, OnceDrainsABacklogLargerThanBatchSizeAndExitsZero) {
  Insert("backlog", 250, 25);
  RelayProcessOptions options = OnceOptions();
  options.outbox_worker["batch_size"] = "100";
  auto relay = Start(db_.Options(), options);
  auto exit = relay->Wait(seconds(120));
  ASSERT_TRUE(exit) << "--once did not exit";
  EXPECT_EQ(exit->exit_code, 0) << Describe(*exit) << "\n" << relay->StderrTail();
  EXPECT_EQ(Count("status = 'published'"), 250);
  EXPECT_EQ(Count("status = 'pending'"), 0);
  EXPECT_EQ(im_.Stats().unique_event_ids, 250u);
  // Three claims at least: the backlog did not fit one batch.
  EXPECT_NE(relay->Stderr().find("drain finished"), std::string::npos);
}

TEST_F(RelayProcessDbTest, OnceExitsOneWhenRowsStillFail) {
  Insert("failing", 5, 5);
  im_.SetDefaultFault(FakeImFault::HttpStatus(502));
  auto relay = Start(db_.Options(), OnceOptions());
  auto exit = relay->Wait(seconds(60));
  ASSERT_TRUE(exit) << "--once did not exit";
  EXPECT_EQ(exit->exit_code, 1) << Describe(*exit) << "\n" << relay->StderrTail();
  EXPECT_EQ(Count("status = 'pending' AND retry_count = 1 AND last_error IS NOT NULL"), 5);
  // Tried once each, not retried within the run.
  EXPECT_EQ(im_.Stats().requests, 5u);
}

TEST_F(RelayProcessDbTest, OnceExitsOneWhenTheDatabaseIsUnreachable) {
  MysqlOptions nowhere = db_.Options();
  nowhere.socket = (dir_ / "no-such.sock").string();
  auto relay = Start(nowhere, OnceOptions());
  auto exit = relay->Wait(seconds(60));
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->exit_code, 1) << Describe(*exit) << "\n" << relay->StderrTail();
}

TEST_F(RelayProcessDbTest, SigtermDuringASlowPublishMarksTheRowAndClaimsNothingNew) {
  RelayProcessOptions options = BaseOptions();
  options.outbox_worker["publish_timeout"] = "\"1s\"";
  options.outbox_worker["lease"] = "\"10s\"";
  im_.SetDefaultFault(FakeImFault::Ok().After(milliseconds(8000)));
  Insert("slow", 1, 1);
  auto relay = Start(db_.Options(), options);
  ASSERT_TRUE(im_.WaitForRequests(1, seconds(30))) << relay->StderrTail();
  // Due now, but the relay is busy with its batch; after the signal it must not claim it.
  Insert("late", 1, 1);
  const auto signalled = Clock::now();
  EXPECT_TRUE(relay->Signal(SIGTERM));
  auto exit = relay->Wait(seconds(20));
  const auto took = std::chrono::duration_cast<milliseconds>(Clock::now() - signalled);
  ASSERT_TRUE(exit) << "no exit after SIGTERM";
  EXPECT_EQ(exit->exit_code, 0) << Describe(*exit) << "\n" << relay->StderrTail();
  // publish_timeout (1s) plus a margin for marking and closing on a busy machine.
  EXPECT_LT(took, milliseconds(1000 + 5000));
  EXPECT_EQ(db_.Scalar("SELECT retry_count FROM room_outbox WHERE event_id = 'slow-0' AND "
                       "status = 'pending' AND last_error IS NOT NULL"),
            1);
  EXPECT_EQ(Count("event_id = 'late-0' AND claim_token IS NULL AND retry_count = 0"), 1);
  EXPECT_TRUE(im_.RequestsFor("late-0").empty());
}

TEST_F(RelayProcessDbTest, SecondSigtermDoesNotSkipTheMarking) {
  RelayProcessOptions options = BaseOptions();
  options.outbox_worker["publish_timeout"] = "\"1s\"";
  im_.SetDefaultFault(FakeImFault::Ok().After(milliseconds(8000)));
  Insert("twice", 1, 1);
  auto relay = Start(db_.Options(), options);
  ASSERT_TRUE(im_.WaitForRequests(1, seconds(30))) << relay->StderrTail();
  EXPECT_TRUE(relay->Signal(SIGTERM));
  std::this_thread::sleep_for(milliseconds(100));
  EXPECT_TRUE(relay->Signal(SIGTERM));
  auto exit = relay->Wait(seconds(20));
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->exit_code, 0) << Describe(*exit) << "\n" << relay->StderrTail();
  EXPECT_EQ(Count("event_id = 'twice-0' AND retry_count = 1 AND last_error IS NOT NULL"), 1);
}

TEST_F(RelayProcessDbTest, KillNineMidBatchThenRestartPublishesEverything) {
  RelayProcessOptions options = BaseOptions();
  options.outbox_worker["publish_timeout"] = "\"1s\"";
  options.outbox_worker["lease"] = "\"3s\"";
  options.outbox_worker["max_in_flight"] = "1";
  Insert("crash", 20, 20);
  im_.SetDefaultFault(FakeImFault::Ok().After(milliseconds(100)));
  auto first = Start(db_.Options(), options);
  ASSERT_TRUE(im_.WaitForRequests(3, seconds(30))) << first->StderrTail();
  EXPECT_TRUE(first->Signal(SIGKILL));
  ASSERT_TRUE(first->Wait(seconds(10)));
  // Rows claimed by the dead relay stay pending until their lease ends.
  EXPECT_GT(Count("status = 'pending'"), 0);

  im_.SetDefaultFault(FakeImFault::Ok());
  auto second = Start(db_.Options(), options);
  EXPECT_TRUE(Eventually([&] { return Count("status = 'published'") == 20; }, seconds(60)))
      << second->StderrTail();
  EXPECT_TRUE(second->Signal(SIGTERM));
  auto exit = second->Wait(seconds(20));
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->exit_code, 0) << Describe(*exit) << "\n" << second->StderrTail();
  EXPECT_EQ(im_.Stats().unique_event_ids, 20u);
}

TEST_F(RelayProcessDbTest, EnabledFalseLogsAndExitsZero) {
  RelayProcessOptions options = BaseOptions();
  options.outbox_worker["enabled"] = "false";
  Insert("disabled", 1, 1);
  auto relay = Start(db_.Options(), options);
  auto exit = relay->Wait(seconds(20));
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->exit_code, 0) << Describe(*exit) << "\n" << relay->StderrTail();
  EXPECT_NE(relay->Stderr().find("outbox worker disabled"), std::string::npos);
  EXPECT_EQ(Count("status = 'pending'"), 1);
}

// Type=notify: the relay tells systemd when it is ready and when it begins to stop, through the
// datagram socket named by NOTIFY_SOCKET (here one of the test's own).
TEST_F(RelayProcessDbTest, NotifiesSystemdWhenReadyAndWhenStopping) {
  const std::string path = (dir_ / "notify.sock").string();
  const core::Fd sock(socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  ASSERT_TRUE(sock);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  ASSERT_LT(path.size(), sizeof(addr.sun_path));
  std::copy(path.begin(), path.end(), addr.sun_path);
  ASSERT_EQ(bind(sock.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  timeval timeout{1, 0};
  setsockopt(sock.get(), SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  std::string received;
  auto receive_until = [&](const std::string& wanted) {
    const auto deadline = Clock::now() + seconds(30);
    while (received.find(wanted) == std::string::npos && Clock::now() < deadline) {
      char buf[4096];
      const ssize_t n = recv(sock.get(), buf, sizeof(buf), 0);
      if (n > 0) received.append(buf, static_cast<size_t>(n)).append("\n");
    }
    return received.find(wanted) != std::string::npos;
  };

  RelayProcessOptions options = BaseOptions();
  options.env = {"NOTIFY_SOCKET=" + path};
  auto relay = Start(db_.Options(), options);
  EXPECT_TRUE(receive_until("READY=1")) << received << relay->StderrTail();
  EXPECT_NE(received.find("STATUS=running"), std::string::npos) << received;
  EXPECT_TRUE(relay->Signal(SIGTERM));
  EXPECT_TRUE(receive_until("STOPPING=1")) << received << relay->StderrTail();
  auto exit = relay->Wait(seconds(20));
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->exit_code, 0) << Describe(*exit) << "\n" << relay->StderrTail();
}

TEST_F(RelayProcessTest, SurvivesAMariaDbRestartWithoutRestarting) {
  PrivateMariaDb server(dir_ / "mariadb");
  ASSERT_TRUE(server.Start());
  ASSERT_TRUE(server.CreateDatabase("relay_restart"));
  MysqlOptions mysql;
  mysql.socket = server.socket();
  mysql.user = "root";
  mysql.database = "relay_restart";
  // The test's own view of the outbox; it reconnects after the restart by itself.
  auto store = relay::MakeMariaDbRelayStore(mysql);
  auto exec = [&](const std::vector<std::string>& statements) {
    std::unique_ptr<MYSQL, decltype(&mysql_close)> conn(mysql_init(nullptr), &mysql_close);
    ASSERT_NE(mysql_real_connect(conn.get(), nullptr, "root", nullptr, mysql.database.c_str(), 0,
                                 mysql.socket.c_str(), 0),
              nullptr)
        << mysql_error(conn.get());
    for (const std::string& s : statements) {
      ASSERT_EQ(mysql_query(conn.get(), s.c_str()), 0) << mysql_error(conn.get());
    }
  };
  auto pending = [&]() -> int64_t {
    auto stats = store->Stats();
    return stats ? stats->pending : -1;
  };

  RelayProcessOptions options = BaseOptions();
  options.outbox_worker["poll_interval"] = "\"200ms\"";
  auto relay = Start(mysql, options);
  exec(PendingRowsSql("before", 10, 5));
  ASSERT_TRUE(Eventually([&] { return pending() == 0; }, seconds(60))) << relay->StderrTail();
  EXPECT_EQ(im_.Stats().unique_event_ids, 10u);

  // Rows that come due while the server is down.
  exec(PendingRowsSql("after", 10, 5, NowMs() + 2000));
  server.Stop();
  std::this_thread::sleep_for(seconds(3));
  ASSERT_TRUE(relay->Alive()) << "the relay exited while the database was down\n"
                              << relay->StderrTail();
  ASSERT_TRUE(server.Start());

  EXPECT_TRUE(Eventually([&] { return pending() == 0; }, seconds(90))) << relay->StderrTail();
  EXPECT_EQ(im_.Stats().unique_event_ids, 20u);
  EXPECT_TRUE(relay->Alive());
  // The round that marked the rows logs the recovery after its marks are visible.
  EXPECT_TRUE(Eventually(
      [&] { return relay->Stderr().find("database reachable again") != std::string::npos; },
      seconds(10)))
      << relay->StderrTail();
  EXPECT_TRUE(relay->Signal(SIGTERM));
  auto exit = relay->Wait(seconds(20));
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->exit_code, 0) << Describe(*exit) << "\n" << relay->StderrTail();
}

}  // namespace
}  // namespace room_outbox::testing
