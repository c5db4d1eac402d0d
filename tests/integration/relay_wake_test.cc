// A relay that wakes: the real outbox-relay with poll_interval = "10s" and [wake] socket set,
// the test MariaDB and the loopback IM stand-in. A row written after the relay went idle is
// published well before its next poll once WakeSender::Notify() is called; a stopped relay
// removes its socket (Notify then returns, refused, and nothing breaks); a relay killed with
// -9 leaves a stale socket file that the next relay replaces; a second relay on the same path,
// or a path holding a regular file, is refused at start (exit 1) without harming what is there.
// A flood of datagrams, and a hook waking on every command of a burst, cost the database a few
// statements per min_interval (the relay's own statement counter, room_outbox_db_statements_total,
// so other tests on the shared server do not count) and the rows committed meanwhile go out.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <thread>

#include "core/fd.h"
#include "room_outbox/hook.h"
#include "support/fake_im_server.h"
#include "support/loopback_http.h"
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
  std::unique_ptr<RelayProcess> MakeRelay(int* port, std::vector<std::string> args = {},
                                          const std::string& poll_interval = "10s") {
    RelayProcessOptions options;
    options.node_id = "relay-wake-test";
    options.outbox_worker = {{"poll_interval", "\"" + poll_interval + "\""}};
    options.args = std::move(args);
    auto relay = std::make_unique<RelayProcess>(db_, im_, options);
    *port = FreePort();
    std::ofstream(relay->config_path(), std::ios::app)
        << "\n[metrics]\nlisten = \"127.0.0.1:" << *port << "\"\n"
        << "\n[wake]\nsocket = \"" << socket_path_ << "\"\n";
    return relay;
  }

  void InsertPending(const std::string& id, const std::string& room = "wake-room") {
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
    internal::WakeSender sender(socket_path_);
    sender.Notify();
    EXPECT_EQ(sender.sent(), 1u);
    EXPECT_TRUE(Eventually([&] { return Published(tag + "-woken"); }, kWokenWithin))
        << "not published within " << kWokenWithin.count() << " ms of the wake-up\n"
        << relay.StderrTail();
    EXPECT_TRUE(
        Eventually([&] { return MetricValue(port, "room_outbox_wakeups_total") == wakeups + 1; },
                   seconds(10)));
  }

  // The relay's statements per second over `window` (its own counter: what other clients of the
  // shared test server send does not count), while `during` runs on this thread, if given.
  double StatementsPerSecond(int port, milliseconds window,
                             const std::function<void()>& during = {}) {
    const auto start = std::chrono::steady_clock::now();
    const int64_t before = MetricValue(port, "room_outbox_db_statements_total");
    EXPECT_GE(before, 0);
    if (during) during();
    std::this_thread::sleep_until(start + window);  // a measuring window, not a wait for an event
    const int64_t after = MetricValue(port, "room_outbox_db_statements_total");
    const double seconds_elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return static_cast<double>(after - before) / seconds_elapsed;
  }
  int64_t PublishedCount(const std::string& prefix) {
    return db_.Scalar(
        "SELECT COUNT(*) FROM room_outbox WHERE status = 'published' AND "
        "event_id LIKE " +
        SqlQuote(prefix + "%"));
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
  // The socket the relay made with the default [wake] socket_mode: its user and its group may
  // send, no other user.
  struct stat st {};
  ASSERT_EQ(::lstat(socket_path_.c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0660u);
  EXPECT_EQ(st.st_gid, ::getegid());
  // A burst of wake-ups is at most a few rounds, and the relay keeps delivering.
  internal::WakeSender sender(socket_path_);
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

// A local process floods the socket as fast as it can (hostile or buggy): the relay's database
// statements stay a small multiple of its idle rate (poll_interval 1s, nothing pending), and rows
// committed meanwhile are delivered. Without coalescing every datagram was a claim: about 2000
// times the idle rate.
TEST_F(RelayWakeTest, AFloodOfDatagramsCostsTheDatabaseASmallMultipleOfTheIdleLoad) {
  int port = 0;
  auto relay = MakeRelay(&port, {}, "1s");
  ASSERT_TRUE(relay->Start());
  InsertPending("flood-probe");
  ASSERT_TRUE(Eventually([&] { return Published("flood-probe"); }, seconds(30)))
      << relay->StderrTail();
  const double idle = StatementsPerSecond(port, milliseconds(3000));

  std::atomic<bool> flooding{true};
  internal::WakeSender flooder(socket_path_);
  std::thread flood([&] {
    while (flooding.load(std::memory_order_relaxed)) flooder.Notify();
  });
  const double flooded = StatementsPerSecond(port, milliseconds(3000), [&] {
    for (int i = 0; i < 3; ++i) {
      InsertPending("flood-row-" + std::to_string(i), "flood-room-" + std::to_string(i));
      std::this_thread::sleep_for(milliseconds(700));  // spread over the window
    }
  });
  const bool delivered = Eventually([&] { return PublishedCount("flood-row-") == 3; }, seconds(30));
  flooding = false;
  flood.join();
  EXPECT_TRUE(delivered) << "rows committed during the flood were not delivered\n"
                         << relay->StderrTail();
  EXPECT_GT(flooder.sent(), 1000u);
  std::printf("statements/s: idle %.1f, flooded %.1f (%llu datagrams sent)\n", idle, flooded,
              static_cast<unsigned long long>(flooder.sent()));
  EXPECT_LE(flooded, 15.0 * std::max(idle, 1.0))
      << "idle " << idle << " statements/s, under the flood " << flooded;
  EXPECT_TRUE(relay->Alive());
}

// A room-service's hook that leaves every command's rows for the relay (sync publish off) and
// wakes it on each, as fast as it commits: the relay delivers them in rounds a wake-up starts at
// most once per [wake] min_interval, not in one round per datagram.
TEST_F(RelayWakeTest, AHookWakingOnEveryCommandOfABurstCostsFewStatementsPerRow) {
  int port = 0;
  auto relay = MakeRelay(&port, {}, "1s");
  ASSERT_TRUE(relay->Start());
  InsertPending("burst-probe");
  ASSERT_TRUE(Eventually([&] { return Published("burst-probe"); }, seconds(30)))
      << relay->StderrTail();
  const double idle = StatementsPerSecond(port, milliseconds(3000));

  HookOptions options;
  options.mysql = db_.Options();
  options.tencent_im = im_.ClientOptions();
  options.sync_publish = SyncPublishMode::kOff;
  options.node_id = "hook-burst-test";
  options.wake_socket = socket_path_;
  Error error;
  auto hook = CreateHook(options, &error);
  ASSERT_TRUE(hook) << error.message;
  constexpr int kCommands = 300;
  const auto start = std::chrono::steady_clock::now();
  const int64_t before = MetricValue(port, "room_outbox_db_statements_total");
  const int64_t rounds_before = MetricValue(port, "room_outbox_rounds_total");
  for (int i = 0; i < kCommands; ++i) {
    const std::string id = "burst-row-" + std::to_string(i);
    Command command{"c-" + id, "burst-room-" + std::to_string(i % 30), "SendGift", "r-" + id, 2,
                    "{}"};
    std::vector<Event> events = {{id, "RoomGiftSent", 2, 0, "{}"}};
    ASSERT_EQ(hook->Commit(command, events).status, CommitStatus::kCommitted);
  }
  ASSERT_TRUE(Eventually([&] { return PublishedCount("burst-row-") == kCommands; }, seconds(60)))
      << relay->StderrTail();
  const int64_t statements = MetricValue(port, "room_outbox_db_statements_total") - before;
  const int64_t rounds = MetricValue(port, "room_outbox_rounds_total") - rounds_before;
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("statements: idle %.1f/s; burst of %d commands: %lld statements, %lld rounds in "
              "%.2f s (%.2f statements/row)\n",
              idle, kCommands, static_cast<long long>(statements), static_cast<long long>(rounds),
              elapsed, static_cast<double>(statements) / kCommands);
  // A round a wake-up starts claims what came due since the last one: at most one round per
  // min_interval (10 ms) and per poll_interval (1 s), however many commands woke it (a busy
  // machine makes rounds fewer, never more; two for the rounds under way at either end) ...
  EXPECT_LE(static_cast<double>(rounds), elapsed * (1000.0 / 10 + 1) + 2)
      << rounds << " rounds in " << elapsed << " s";
  // ... and the rows share them: a round per datagram would cost several statements per row.
  EXPECT_LT(static_cast<double>(statements) / kCommands, 1.0)
      << statements << " statements for " << kCommands << " rows in " << rounds << " rounds";
  EXPECT_TRUE(relay->Alive());
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
  internal::WakeSender sender(socket_path_);
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
    internal::WakeSender sender(socket_path_);
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
