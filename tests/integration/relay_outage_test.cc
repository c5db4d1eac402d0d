// A database outage in the middle of a drain, for real: a running outbox-relay process, a private
// MariaDB of the test's own that is stopped for 3 s and started again (over its unix socket, and
// over TCP), and the loopback IM stand-in. The relay keeps what it had when the connection went
// (IM's answers, the rows it held but had not sent) and writes it first when the server is back:
// nothing is sent twice, and no room waits for the lease (120 s here, far beyond the test's
// patience) before its rows go on.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "store/mariadb_relay_store.h"
#include "support/fake_im_server.h"
#include "support/loopback_http.h"
#include "support/mysql_admin.h"
#include "support/private_mariadb.h"
#include "support/relay_process.h"
#include "support/test_rows.h"
#include "support/wait.h"

namespace room_outbox::testing {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using std::chrono::seconds;

enum class Transport { kSocket, kTcp };

constexpr char kDatabase[] = "relay_outage";
constexpr char kTcpUser[] = "outage_relay";
constexpr char kTcpPassword[] = "outage-pw";
constexpr int kRows = 1200;
constexpr int kRooms = 60;

class RelayOutageTest : public ::testing::TestWithParam<Transport> {
 protected:
  void SetUp() override {
    ASSERT_TRUE(im_.running()) << im_.start_error();
    char dir[] = "/tmp/relay-outage-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    dir_ = dir;
    server_ = std::make_unique<PrivateMariaDb>(dir_ / "mariadb");
    if (GetParam() == Transport::kTcp) {
      port_ = FreePort();
      server_args_ = {"--bind-address=127.0.0.1", "--port=" + std::to_string(port_)};
    }
    ASSERT_TRUE(server_->Start(server_args_));
    ASSERT_TRUE(server_->CreateDatabase(kDatabase));
    Exec("CREATE USER '" + std::string(kTcpUser) + "'@'%' IDENTIFIED BY '" + kTcpPassword +
         "'; GRANT ALL ON " + kDatabase + ".* TO '" + kTcpUser + "'@'%'");
  }
  void TearDown() override {
    server_.reset();
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  void Exec(const std::string& sql) {
    std::string error;
    core::MysqlPtr conn = ConnectAsRoot(server_->socket(), error);
    ASSERT_TRUE(conn) << error;
    std::vector<SqlRow> rows;
    const std::string use = "USE " + std::string(kDatabase) + "; ";
    ASSERT_EQ(RunSql(conn.get(), use + sql, rows, 200), "");
  }

  // The relay's [mysql] keys for the transport under test.
  RelayProcessOptions Options() const {
    RelayProcessOptions options;
    options.node_id = "relay-outage-test";
    options.log_level = "info";
    options.mysql = {{"connect_timeout", "\"2s\""}};
    if (GetParam() == Transport::kTcp) {
      options.mysql["socket"] = "\"\"";
      options.mysql["host"] = "\"127.0.0.1\"";
      options.mysql["port"] = std::to_string(port_);
      options.mysql["user"] = "\"" + std::string(kTcpUser) + "\"";
      options.env = {std::string("ROOM_OUTBOX_MYSQL_PASSWORD=") + kTcpPassword};
    }
    options.outbox_worker = {{"poll_interval", "\"200ms\""}, {"batch_size", "100"},
                             {"publish_timeout", "\"10s\""}, {"lease", "\"120s\""},
                             {"max_in_flight", "16"},        {"room_min_interval", "\"0ms\""}};
    return options;
  }

  FakeImServer im_;
  fs::path dir_;
  std::unique_ptr<PrivateMariaDb> server_;
  std::vector<std::string> server_args_;
  int port_ = 0;
};

TEST_P(RelayOutageTest, AnOutageMidDrainSendsNothingTwiceAndStallsNoRoomForTheLease) {
  // 16 requests of 100 ms at a time: the drain takes several seconds, so the outage meets it.
  im_.SetDefaultFault(FakeImFault::Ok().After(milliseconds(100)));
  // The outage meets rows in hand for sure: IM holds its answers while the server stops, then
  // gives them (OK), so the relay has answers it cannot mark.
  std::mutex gate_mu;
  std::condition_variable gate_cv;
  bool holding = false;
  size_t held = 0;
  im_.SetFaultFunction([&](const FakeImRequest&) -> std::optional<FakeImFault> {
    std::unique_lock<std::mutex> lock(gate_mu);
    if (holding) {
      ++held;
      gate_cv.wait(lock, [&] { return !holding; });
    }
    return std::nullopt;  // the default fault: OK after 100 ms
  });
  auto open_gate = [&] {
    std::lock_guard<std::mutex> lock(gate_mu);
    holding = false;
    gate_cv.notify_all();
  };
  for (const std::string& sql : PendingRowsSql("outage", kRows, kRooms)) Exec(sql);
  MysqlOptions mysql = server_->Options(kDatabase);
  RelayProcess relay(mysql, im_, Options());
  ASSERT_TRUE(relay.Start());
  ASSERT_TRUE(Eventually([&] { return im_.Stats().unique_event_ids >= 200; }, seconds(60)))
      << relay.StderrTail();

  {
    std::lock_guard<std::mutex> lock(gate_mu);
    holding = true;
  }
  const bool some_held = Eventually(
      [&] {
        std::lock_guard<std::mutex> lock(gate_mu);
        return held > 0;
      },
      seconds(30));
  const bool stopped = some_held && server_->Stop();
  open_gate();
  ASSERT_TRUE(some_held) << relay.StderrTail();
  ASSERT_TRUE(stopped);
  // The relay meets the outage with IM's answers in hand: their marks fail.
  ASSERT_TRUE(Eventually(
      [&] { return relay.Stderr().find("marking rows published failed") != std::string::npos; },
      seconds(30)))
      << relay.StderrTail();
  std::this_thread::sleep_for(seconds(3));  // the outage itself
  ASSERT_TRUE(relay.Alive()) << relay.StderrTail();
  ASSERT_TRUE(server_->Start(server_args_));
  const auto returned_at = std::chrono::steady_clock::now();

  auto store = relay::MakeMariaDbRelayStore(mysql);
  auto pending = [&]() -> int64_t {
    auto stats = store->Stats();
    return stats ? stats->pending : -1;
  };
  // Well within the 120 s lease: rows held at the outage did not wait for it.
  EXPECT_TRUE(Eventually([&] { return pending() == 0; }, seconds(60))) << relay.StderrTail();
  const FakeImStats stats = im_.Stats();
  EXPECT_EQ(stats.unique_event_ids, static_cast<size_t>(kRows));
  EXPECT_EQ(stats.duplicates, 0u) << "IM's answers were written after the outage, not resent";
  EXPECT_NE(relay.Stderr().find("results kept while the database was away written"),
            std::string::npos)
      << "the outage met rows in hand\n"
      << relay.StderrTail();
  // The figure of the docs (printed, not asserted: it is a time): how long after the server's
  // return the slowest room with rows left got its first delivery.
  std::map<std::string, std::chrono::steady_clock::time_point> first_after;
  for (const FakeImRequest& r : im_.Requests()) {
    if (r.answer != FakeImFault::Kind::kOk || r.arrived < returned_at) continue;
    auto [it, inserted] = first_after.emplace(r.room_id, r.arrived);
    if (!inserted && r.arrived < it->second) it->second = r.arrived;
  }
  milliseconds slowest{0};
  for (const auto& [room, at] : first_after) {
    slowest = std::max(slowest, std::chrono::duration_cast<milliseconds>(at - returned_at));
  }
  std::printf(
      "outage: %zu rooms with rows left; the slowest's first delivery %lld ms after the "
      "database returned; %zu duplicates\n",
      first_after.size(), static_cast<long long>(slowest.count()), stats.duplicates);
  auto exit = relay.Stop(seconds(20));
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->exit_code, 0) << Describe(*exit) << "\n" << relay.StderrTail();
}

INSTANTIATE_TEST_SUITE_P(Transports, RelayOutageTest,
                         ::testing::Values(Transport::kSocket, Transport::kTcp),
                         [](const ::testing::TestParamInfo<Transport>& info) {
                           return info.param == Transport::kSocket ? "Socket" : "Tcp";
                         });

}  // namespace
}  // namespace room_outbox::testing
