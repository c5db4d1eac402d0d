// A chaos run of the whole delivery path: 10,000 events over 100 rooms committed through the hook
// (its sync publish cannot reach IM, so the relay delivers them all), 20% transient IM faults, the
// relay killed with SIGKILL again and again mid-drain and MariaDB restarted twice under a running
// relay. Nothing may be lost, duplicates stay within what the kills can explain (each kill leaves
// at most the messages in flight and those answered since the last marks delivered but unmarked:
// 2 x max_in_flight rows), and every room is delivered in commit order.
#include <signal.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "room_outbox/hook.h"
#include "store/mariadb_relay_store.h"
#include "support/delivery_checks.h"
#include "support/fake_im_server.h"
#include "support/private_mariadb.h"
#include "support/relay_process.h"
#include "support/wait.h"

namespace room_outbox::testing {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using std::chrono::seconds;
using SteadyClock = std::chrono::steady_clock;

constexpr int kRooms = 100;
constexpr int kCommandsPerRoom = 25;
constexpr int kEventsPerCommand = 4;
constexpr int kEvents = kRooms * kCommandsPerRoom * kEventsPerCommand;  // 10,000
constexpr int kDisruptions = 22;                                         // 20 kills, 2 restarts
constexpr size_t kMaxInFlight = 16;
// Generous for a loaded 2-core CI machine; a healthy run needs a fraction of each.
constexpr milliseconds kProgressTimeout{60'000};
constexpr milliseconds kDrainTimeout{180'000};

std::string RoomId(int room) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "chaos-room-%03d", room);
  return buf;
}

// Commits every room's commands in order through the hook, one writer for all rooms (as a Room
// Cell owns its room). Each event's room_seq is its position in the room, 1-based.
void CommitAll(const MysqlOptions& mysql, const FakeImServer& im) {
  HookOptions options;
  options.mysql = mysql;
  options.tencent_im = im.ClientOptions();
  // Nothing listens on port 1: every sync publish fails at once and the relay delivers all.
  options.tencent_im.endpoint = "http://127.0.0.1:1";
  options.sync_publish_timeout = milliseconds(200);
  options.node_id = "chaos-room-service";
  Error error;
  auto hook = CreateHook(options, &error);
  ASSERT_NE(hook, nullptr) << error.message;
  for (int k = 0; k < kCommandsPerRoom; ++k) {
    for (int r = 0; r < kRooms; ++r) {
      Command command;
      command.room_id = RoomId(r);
      command.command_id = "cmd-" + command.room_id + "-" + std::to_string(k);
      command.command_type = "SendGift";
      command.room_seq = k + 1;
      std::vector<Event> events;
      for (int e = 0; e < kEventsPerCommand; ++e) {
        Event event;
        event.room_seq = k * kEventsPerCommand + e + 1;
        event.event_id = "ev-" + command.room_id + "-" + std::to_string(event.room_seq);
        event.event_type = "RoomGiftSent";
        event.payload = R"({"gift":"rose"})";
        events.push_back(std::move(event));
      }
      CommitResult result = hook->Commit(command, events);
      ASSERT_EQ(result.status, CommitStatus::kCommitted) << result.error.message;
    }
  }
}

class ChaosTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/room-outbox-chaos-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    server_ = std::make_unique<PrivateMariaDb>(dir_ / "mariadb");
    ASSERT_TRUE(server_->Start());
    ASSERT_TRUE(server_->CreateDatabase("chaos"));
    mysql_ = server_->Options("chaos");
    view_ = relay::MakeMariaDbRelayStore(mysql_);
  }
  void TearDown() override {
    relays_.clear();
    view_.reset();
    server_.reset();
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  // Pending rows as the database says; -1 while it cannot be read (during a restart).
  int64_t Pending() {
    auto stats = view_->Stats();
    return stats ? stats->pending : -1;
  }

  RelayProcess& StartRelay() {
    RelayProcessOptions options;
    options.node_id = "chaos-relay-" + std::to_string(relays_.size() + 1);
    // Debug: a row's later failures are logged at debug, and the unknown outcomes are counted
    // from every failure line.
    options.log_level = "debug";
    options.outbox_worker = {{"poll_interval", "\"100ms\""},
                             {"publish_timeout", "\"1s\""},
                             {"lease", "\"3s\""},
                             {"max_in_flight", std::to_string(kMaxInFlight)}};
    relays_.push_back(std::make_unique<RelayProcess>(mysql_, *im_, options));
    EXPECT_TRUE(relays_.back()->Start());
    return *relays_.back();
  }

  // Waits until `rows` more rows left pending than at the call (or none is left).
  bool Progress(int64_t rows) {
    const int64_t start = Pending();
    return Eventually(
        [&] {
          const int64_t now = Pending();
          return now == 0 || (now >= 0 && start >= 0 && start - now >= rows);
        },
        kProgressTimeout);
  }

  std::string Logs() const {
    std::string out;
    for (const auto& relay : relays_) out += relay->StderrTail(15);
    return out;
  }

  size_t CountInLogs(const std::string& text) const {
    size_t n = 0;
    for (const auto& relay : relays_) n += relay->CountLogLines({"outbox event failed", text});
    return n;
  }

  fs::path dir_;
  std::unique_ptr<PrivateMariaDb> server_;
  MysqlOptions mysql_;
  std::unique_ptr<relay::MariaDbRelayStore> view_;
  std::unique_ptr<FakeImServer> im_ = std::make_unique<FakeImServer>();
  std::vector<std::unique_ptr<RelayProcess>> relays_;
};

TEST_F(ChaosTest, KillsRestartsAndFaultsLoseNothingAndKeepEachRoomsOrder) {
  ASSERT_NO_FATAL_FAILURE(CommitAll(mysql_, *im_));
  ASSERT_EQ(Pending(), kEvents);
  auto faults = std::make_shared<TransientFaults>(20);
  im_->SetFaultFunction([faults](const FakeImRequest& r) { return (*faults)(r); });

  const auto started = SteadyClock::now();
  RelayProcess* relay = &StartRelay();
  int kills = 0;
  int restarts = 0;
  for (int d = 1; d <= kDisruptions && Pending() != 0; ++d) {
    ASSERT_TRUE(Progress(kEvents / (kDisruptions + 4))) << "no progress\n" << Logs();
    if (d == 8 || d == 16) {
      server_->Stop();
      ASSERT_TRUE(server_->Start());
      ++restarts;
      continue;
    }
    ASSERT_TRUE(relay->Kill()) << "the relay was not running\n" << relay->StderrTail();
    ++kills;
    relay = &StartRelay();
  }
  ASSERT_TRUE(Eventually([&] { return Pending() == 0; }, kDrainTimeout)) << Logs();
  const double seconds_taken =
      std::chrono::duration<double>(SteadyClock::now() - started).count();
  EXPECT_TRUE(relay->Signal(SIGTERM));
  auto exit = relay->Wait(seconds(20));
  ASSERT_TRUE(exit) << relay->StderrTail();
  EXPECT_EQ(exit->exit_code, 0) << Describe(*exit) << "\n" << relay->StderrTail();

  const FakeImStats stats = im_->Stats();
  // Outcomes the relay could not know (a timeout or a dropped answer) may be sent twice too.
  const size_t unknown = CountInLogs("error=\"unknown");
  std::printf("chaos: %d events, %d kills, %d restarts, %zu faulted attempts, %zu duplicates, "
              "%zu unknown outcomes, drained in %.1f s\n",
              kEvents, kills, restarts, faults->faulted(), stats.duplicates, unknown,
              seconds_taken);
  EXPECT_EQ(stats.unique_event_ids, static_cast<size_t>(kEvents));
  EXPECT_LE(stats.duplicates, static_cast<size_t>(kills) * 2 * kMaxInFlight + unknown);
  auto published = view_->Stats();
  ASSERT_TRUE(published) << published.error().message;
  EXPECT_EQ(published->pending, 0);

  for (const auto& [room, delivered] : DeliveredByRoom(*im_)) {
    std::set<int64_t> seen;
    int64_t last_new = 0;
    for (const FakeImRequest& r : delivered) {
      if (!seen.insert(r.room_seq).second) continue;  // a duplicate of an earlier delivery
      ASSERT_EQ(r.room_seq, last_new + 1) << room << " delivered out of order";
      last_new = r.room_seq;
    }
    EXPECT_EQ(last_new, kCommandsPerRoom * kEventsPerCommand) << room;
  }
}

}  // namespace
}  // namespace room_outbox::testing
