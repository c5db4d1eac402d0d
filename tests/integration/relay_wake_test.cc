// A relay that wakes: the real outbox-relay with poll_interval = "10s" and [wake] socket set,
// the test MariaDB and the loopback IM stand-in. A row written after the relay went idle is
// published well before its next poll once WakeSender::Notify() is called; a stopped relay
// removes its socket (Notify then returns, refused, and nothing breaks); a relay killed with
// -9 leaves a stale socket file that the next relay replaces; a second relay on the same path,
// or a path holding a regular file, is refused at start (exit 1) without harming what is there.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "core/fd.h"
#include "room_outbox/hook.h"
#include "support/fake_im_server.h"
#include "support/relay_process.h"
#include "support/test_database.h"
#include "support/test_rows.h"
#include "support/wait.h"
#include "wake_sender.h"

namespace room_outbox::testing {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using std::chrono::seconds;

// Far below the relay's poll_interval of 10 s, far above a round on a busy machine.
constexpr milliseconds kWokenWithin{5000};

int FreePort() {
  const Fd fd(::socket(AF_INET, SOCK_STREAM, 0));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  EXPECT_EQ(::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  EXPECT_EQ(::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&addr), &len), 0);
  return ntohs(addr.sin_port);
}

// The value of the unlabelled sample `name` on the relay's /metrics, or -1 without an answer.
int64_t MetricValue(int port, const std::string& name) {
  httplib::Client client("127.0.0.1", port);
  client.set_connection_timeout(2);
  client.set_read_timeout(5);
  auto res = client.Get("/metrics");
  if (!res || res->status != 200) return -1;
  std::istringstream in(res->body);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(name + " ", 0) == 0) return std::atoll(line.c_str() + name.size() + 1);
  }
  return -1;
}

class RelayWakeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(fs::exists(RelayProcess::BinaryPath())) << RelayProcess::BinaryPath();
    ASSERT_TRUE(im_.running()) << im_.start_error();
    ASSERT_TRUE(db_.valid());
    char tmpl[] = "/tmp/relay-wake-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    socket_path_ = (dir_ / "wake.sock").string();
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }

  // A relay polling every 10 s with [wake] socket and a metrics endpoint (its port in *port).
  std::unique_ptr<RelayProcess> MakeRelay(int* port, std::vector<std::string> args = {}) {
    RelayProcessOptions options;
    options.node_id = "relay-wake-test";
    options.outbox_worker = {{"poll_interval", "\"10s\""}};
    options.args = std::move(args);
    auto relay = std::make_unique<RelayProcess>(db_, im_, options);
    *port = FreePort();
    std::ofstream(relay->config_path(), std::ios::app)
        << "\n[metrics]\nlisten = \"127.0.0.1:" << *port << "\"\n"
        << "\n[wake]\nsocket = \"" << socket_path_ << "\"\n";
    return relay;
  }

  void InsertPending(const std::string& id) {
    const std::string room = "wake-room";
    db_.Exec(
        "INSERT INTO room_outbox (event_id, event_type, room_id, command_id, request_id, "
        "envelope, status, retry_count, next_attempt_at_ms, created_at_ms, updated_at_ms) "
        "VALUES (" +
        SqlQuote(id) + ", 'RoomGiftSent', " + SqlQuote(room) + ", " + SqlQuote("cmd-" + id) + ", " +
        SqlQuote("req-" + id) + ", " + SqlQuote(TestEnvelope(id, room, 1, "wake-test")) +
        ", 'pending', 0, 0, " + kServerNowSql + ", " + kServerNowSql + ")");
  }
  bool Published(const std::string& id) {
    return db_.Scalar(
               "SELECT COUNT(*) FROM room_outbox WHERE status = 'published' AND "
               "event_id = " +
               SqlQuote(id)) == 1;
  }

  // The relay has run its first round (which published `probe`) and now idles for 10 s: a row
  // written now is published well before that only if a wake-up starts a round.
  void ExpectAWakeUpDelivers(RelayProcess& relay, int port, const std::string& tag) {
    InsertPending(tag + "-probe");
    ASSERT_TRUE(Eventually([&] { return Published(tag + "-probe"); }, seconds(30)))
        << relay.StderrTail();
    const int64_t wakeups = MetricValue(port, "room_outbox_wakeups_total");
    ASSERT_GE(wakeups, 0) << relay.StderrTail();
    InsertPending(tag + "-woken");
    WakeSender sender(socket_path_);
    sender.Notify();
    EXPECT_EQ(sender.sent(), 1u);
    EXPECT_TRUE(Eventually([&] { return Published(tag + "-woken"); }, kWokenWithin))
        << "not published within " << kWokenWithin.count() << " ms of the wake-up\n"
        << relay.StderrTail();
    EXPECT_TRUE(
        Eventually([&] { return MetricValue(port, "room_outbox_wakeups_total") == wakeups + 1; },
                   seconds(10)));
  }

  TestDatabase db_;
  FakeImServer im_;
  fs::path dir_;
  std::string socket_path_;
};

TEST_F(RelayWakeTest, ADatagramHasTheRelayPublishARowWellBeforeItsNextPoll) {
  int port = 0;
  auto relay = MakeRelay(&port);
  ASSERT_TRUE(relay->Start());
  ExpectAWakeUpDelivers(*relay, port, "first");
  // A burst of wake-ups is at most a few rounds, and the relay keeps delivering.
  WakeSender sender(socket_path_);
  for (int i = 0; i < 50; ++i) sender.Notify();
  InsertPending("after-burst");
  sender.Notify();
  EXPECT_TRUE(Eventually([&] { return Published("after-burst"); }, kWokenWithin))
      << relay->StderrTail();
  EXPECT_TRUE(relay->Alive());
}

// End to end: a hook whose sync publish fails releases its rows and wakes the relay through
// HookOptions::wake_socket; the relay, idle for 10 s, publishes them well before its next poll.
TEST_F(RelayWakeTest, RowsAHookLeavesAreDeliveredByTheRelayItWakes) {
  FakeImServer hook_im;  // what the hook reaches: failing
  ASSERT_TRUE(hook_im.running()) << hook_im.start_error();
  hook_im.SetDefaultFault(FakeImFault::ImError(10002, "internal error"));
  int port = 0;
  auto relay = MakeRelay(&port);
  ASSERT_TRUE(relay->Start());
  InsertPending("hook-probe");  // the relay has run a round and now idles for 10 s
  ASSERT_TRUE(Eventually([&] { return Published("hook-probe"); }, seconds(30)))
      << relay->StderrTail();

  HookOptions options;
  options.mysql = db_.Options();
  options.tencent_im = hook_im.ClientOptions();
  options.sync_publish = SyncPublishMode::kInline;
  options.node_id = "hook-wake-test";
  options.wake_socket = socket_path_;
  Error error;
  auto hook = CreateHook(options, &error);
  ASSERT_TRUE(hook) << error.message;
  Command command{"hook-wake-c1", "wake-room", "SendGift", "req-hook-wake", 2, "{}"};
  std::vector<Event> events = {{"hook-wake-e1", "RoomGiftSent", 2, 0, "{}"},
                               {"hook-wake-e2", "RoomGiftSent", 2, 0, "{}"}};
  const CommitResult result = hook->Commit(command, events);
  ASSERT_EQ(result.status, CommitStatus::kCommitted) << result.error.message;
  ASSERT_EQ(result.events.size(), 2u);
  EXPECT_EQ(result.events[0].state, DeliveryState::kPending);
  EXPECT_FALSE(hook_im.RequestsFor("hook-wake-e1").empty())
      << "the hook's sync publish was not tried";

  EXPECT_TRUE(Eventually([&] { return Published("hook-wake-e1") && Published("hook-wake-e2"); },
                         kWokenWithin))
      << "the hook's rows were not published within " << kWokenWithin.count()
      << " ms of the commit (the relay polls every 10 s)\n"
      << relay->StderrTail();
  EXPECT_EQ(db_.Scalar("SELECT MAX(retry_count) FROM room_outbox WHERE command_id = "
                       "'hook-wake-c1'"),
            0)
      << "the hook's failed sync publish is not a charged attempt";
}

TEST_F(RelayWakeTest, AStoppedRelayRemovesItsSocketAndANotifyThenChangesNothing) {
  int port = 0;
  auto relay = MakeRelay(&port);
  ASSERT_TRUE(relay->Start());
  ASSERT_TRUE(Eventually([&] { return fs::is_socket(socket_path_); }, seconds(30)))
      << relay->StderrTail();
  auto exit = relay->Stop(seconds(30));
  ASSERT_TRUE(exit) << relay->StderrTail();
  EXPECT_EQ(exit->exit_code, 0) << Describe(*exit) << "\n" << relay->StderrTail();
  EXPECT_FALSE(fs::exists(fs::symlink_status(socket_path_)));
  // No relay bound: the hook's send returns at once, refused, and the row simply waits.
  WakeSender sender(socket_path_);
  sender.Notify();
  EXPECT_EQ(sender.sent(), 0u);
  EXPECT_EQ(sender.refused(), 1u);
}

TEST_F(RelayWakeTest, TheStaleSocketOfAKilledRelayIsReplacedByTheNextOne) {
  int port = 0;
  auto killed = MakeRelay(&port);
  ASSERT_TRUE(killed->Start());
  ASSERT_TRUE(Eventually([&] { return fs::is_socket(socket_path_); }, seconds(30)))
      << killed->StderrTail();
  ASSERT_TRUE(killed->Kill());
  ASSERT_TRUE(fs::is_socket(socket_path_));  // kill -9 removes nothing
  {
    WakeSender sender(socket_path_);
    sender.Notify();
    EXPECT_EQ(sender.refused(), 1u);  // a file nobody reads
  }
  auto next = MakeRelay(&port);
  ASSERT_TRUE(next->Start());
  ExpectAWakeUpDelivers(*next, port, "restarted");
}

TEST_F(RelayWakeTest, ASecondRelayOnTheSamePathIsRefusedAndTheFirstKeepsItsWakeUps) {
  int port = 0;
  auto first = MakeRelay(&port);
  ASSERT_TRUE(first->Start());
  ASSERT_TRUE(Eventually([&] { return fs::is_socket(socket_path_); }, seconds(30)))
      << first->StderrTail();
  int second_port = 0;
  auto second = MakeRelay(&second_port);
  ASSERT_TRUE(second->Start());
  auto exit = second->Wait(seconds(30));
  ASSERT_TRUE(exit) << second->StderrTail();
  EXPECT_EQ(exit->exit_code, 1) << Describe(*exit);
  EXPECT_EQ(second->CountLogLines(
                {"cannot bind the wake socket", socket_path_, "bound by a running process"}),
            1u)
      << second->StderrTail();
  // --once never binds the socket: it runs beside the daemon that holds it.
  int once_port = 0;
  auto once = MakeRelay(&once_port, {"--once"});
  ASSERT_TRUE(once->Start());
  auto once_exit = once->Wait(seconds(60));
  ASSERT_TRUE(once_exit) << once->StderrTail();
  EXPECT_EQ(once_exit->exit_code, 0) << Describe(*once_exit) << "\n" << once->StderrTail();
  ExpectAWakeUpDelivers(*first, port, "first-kept");
}

TEST_F(RelayWakeTest, ARegularFileAtThePathIsRefusedAtStartAndLeftAlone) {
  std::ofstream(socket_path_) << "not a socket\n";
  int port = 0;
  auto relay = MakeRelay(&port);
  ASSERT_TRUE(relay->Start());
  auto exit = relay->Wait(seconds(30));
  ASSERT_TRUE(exit) << relay->StderrTail();
  EXPECT_EQ(exit->exit_code, 1) << Describe(*exit);
  EXPECT_EQ(relay->CountLogLines({"cannot bind the wake socket", socket_path_, "regular file"}), 1u)
      << relay->StderrTail();
  EXPECT_TRUE(fs::is_regular_file(socket_path_));
}

}  // namespace
}  // namespace room_outbox::testing
