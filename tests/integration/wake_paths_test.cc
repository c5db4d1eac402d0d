// Every path on which the hook leaves rows for the relay, end to end: the real outbox-relay with
// poll_interval = "30s" and [wake] socket set, the hook in this process sharing the socket, the
// test MariaDB and loopback IM stand-ins (one the hook reaches, one the relay reaches, answering
// OK). Each test commits through one path and waits (bounded well below the poll) for the rows to
// be published: only a wake-up, or the relay's own knowledge of when a row comes due, can deliver
// them in time. The commit -> published time each row took is then checked against the same
// bound, from the server's own timestamps.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

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

// Far below the relay's poll_interval of 30 s, far above a round on a busy machine.
constexpr milliseconds kDeliveredWithin{8000};

class WakePathsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(fs::exists(RelayProcess::BinaryPath())) << RelayProcess::BinaryPath();
    ASSERT_TRUE(relay_im_.running()) << relay_im_.start_error();
    ASSERT_TRUE(hook_im_.running()) << hook_im_.start_error();
    ASSERT_TRUE(db_.valid());
    char tmpl[] = "/tmp/wake-paths-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    socket_path_ = (dir_ / "wake.sock").string();
    RelayProcessOptions options;
    options.node_id = "wake-paths-test";
    options.outbox_worker = {{"poll_interval", "\"30s\""}, {"room_min_interval", "\"0ms\""}};
    relay_ = std::make_unique<RelayProcess>(db_, relay_im_, options);
    std::ofstream(relay_->config_path(), std::ios::app)
        << "\n[wake]\nsocket = \"" << socket_path_ << "\"\n";
    ASSERT_TRUE(relay_->Start());
    // The relay has run a round and idles for 30 s (woken, in case its first round ran before
    // the row was written).
    InsertPending("probe-row", "probe-room", 0);
    internal::WakeSender(socket_path_).Notify();
    ASSERT_TRUE(Eventually([&] { return Published("probe-row"); }, seconds(30)))
        << relay_->StderrTail();
  }
  void TearDown() override {
    hook_.reset();
    relay_.reset();
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }

  HookOptions Options(SyncPublishMode mode) const {
    HookOptions options;
    options.mysql = db_.Options();
    options.tencent_im = hook_im_.ClientOptions();
    options.sync_publish = mode;
    options.node_id = "wake-paths-hook";
    options.wake_socket = socket_path_;
    return options;
  }
  void MakeHook(const HookOptions& options) {
    Error error;
    hook_ = CreateHook(options, &error);
    ASSERT_TRUE(hook_) << error.message;
  }
  // Commits command `tag` of `room` (room_seq `seq`) with three events; returns their states.
  CommitResult CommitCommand(const std::string& tag, const std::string& room, int64_t seq) {
    Command command{tag, room, "SendGift", "req-" + tag, seq, "{}"};
    std::vector<Event> events;
    for (int k = 0; k < 3; ++k) {
      events.push_back(Event{tag + "-e" + std::to_string(k), "RoomGiftSent", seq, 0, "{}"});
    }
    CommitResult result = hook_->Commit(command, events);
    EXPECT_EQ(result.status, CommitStatus::kCommitted) << result.error.message;
    return result;
  }

  // A pending row due `due_in_ms` after the server's now, leased to a claim nobody ends when
  // `leased`; created_at_ms is its due time.
  void InsertPending(const std::string& id, const std::string& room, int64_t due_in_ms,
                     bool leased = false) {
    const std::string due = std::string(kServerNowSql) + " + " + std::to_string(due_in_ms);
    db_.Exec(
        "INSERT INTO room_outbox (event_id, event_type, room_id, command_id, request_id, "
        "envelope, status, retry_count, next_attempt_at_ms, claim_token, created_at_ms, "
        "updated_at_ms) VALUES (" +
        SqlQuote(id) + ", 'RoomGiftSent', " + SqlQuote(room) + ", " + SqlQuote("cmd-" + id) + ", " +
        SqlQuote("req-" + id) + ", " + SqlQuote(TestEnvelope(id, room, 1, "wake-paths")) +
        ", 'pending', 0, " + due + ", " + (leased ? "'dead-hook'" : "NULL") + ", " + due + ", " +
        kServerNowSql + ")");
  }
  bool Published(const std::string& event_id) {
    return db_.Scalar(
               "SELECT COUNT(*) FROM room_outbox WHERE status = 'published' AND "
               "event_id = " +
               SqlQuote(event_id)) == 1;
  }
  int64_t PendingLike(const std::string& prefix) {
    return db_.Scalar(
        "SELECT COUNT(*) FROM room_outbox WHERE status = 'pending' AND "
        "event_id LIKE " +
        SqlQuote(prefix + "%"));
  }
  // Waits for every row whose event_id starts with `prefix` to be published, then checks the
  // slowest one's published_at_ms - created_at_ms.
  void ExpectAllDeliveredSoon(const std::string& prefix) {
    EXPECT_TRUE(Eventually([&] { return PendingLike(prefix) == 0; }, kDeliveredWithin))
        << PendingLike(prefix) << " rows still pending " << kDeliveredWithin.count()
        << " ms later (the relay polls every 30 s)\n"
        << relay_->StderrTail();
    const int64_t slowest = db_.Scalar(
        "SELECT COALESCE(MAX(published_at_ms - created_at_ms), -1) FROM room_outbox "
        "WHERE event_id LIKE " +
        SqlQuote(prefix + "%"));
    EXPECT_GE(slowest, 0);
    EXPECT_LT(slowest, kDeliveredWithin.count());
  }

  TestDatabase db_;
  FakeImServer relay_im_;
  FakeImServer hook_im_;
  fs::path dir_;
  std::string socket_path_;
  std::unique_ptr<RelayProcess> relay_;
  std::unique_ptr<Hook> hook_;
};

TEST_F(WakePathsTest, SyncPublishOff) {
  MakeHook(Options(SyncPublishMode::kOff));
  for (int i = 0; i < 5; ++i) CommitCommand("off-c" + std::to_string(i), "off-room", i + 1);
  ExpectAllDeliveredSoon("off-c");
}

TEST_F(WakePathsTest, RowScopedErrorOnTheSyncPublish) {
  hook_im_.SetDefaultFault(FakeImFault::ImError(10002, "internal error"));
  MakeHook(Options(SyncPublishMode::kInline));
  for (int i = 0; i < 5; ++i) CommitCommand("rowerr-c" + std::to_string(i), "rowerr-room", i + 1);
  ExpectAllDeliveredSoon("rowerr-c");
}

// HTTP 502 opens the sync breaker after three commands; the later ones are written due at once.
TEST_F(WakePathsTest, SyncBreakerOpen) {
  hook_im_.SetDefaultFault(FakeImFault::HttpStatus(502));
  MakeHook(Options(SyncPublishMode::kInline));
  for (int i = 0; i < 6; ++i) {
    CommitCommand("breaker-c" + std::to_string(i), "breaker-room-" + std::to_string(i), 1);
  }
  ExpectAllDeliveredSoon("breaker-c");
}

TEST_F(WakePathsTest, SyncPublishTimeout) {
  hook_im_.SetDefaultFault(FakeImFault::Ok().After(milliseconds(1000)));
  HookOptions options = Options(SyncPublishMode::kInline);
  options.sync_publish_timeout = milliseconds(100);
  MakeHook(options);
  CommitCommand("timeout-c0", "timeout-room", 1);
  ExpectAllDeliveredSoon("timeout-c0");
}

TEST_F(WakePathsTest, BackgroundPublishFailing) {
  hook_im_.SetDefaultFault(FakeImFault::ImError(10002, "internal error"));
  MakeHook(Options(SyncPublishMode::kBackground));
  for (int i = 0; i < 5; ++i) CommitCommand("bgfail-c" + std::to_string(i), "bgfail-room", i + 1);
  ExpectAllDeliveredSoon("bgfail-c");
}

// A room with an older pending row of another command (here one the relay is sending, its IM
// answering after 300 ms): the new rows are left for the relay.
TEST_F(WakePathsTest, EarlierPendingRoom) {
  hook_im_.SetDefaultFault(FakeImFault::ImError(10002, "internal error"));
  relay_im_.SetDefaultFault(FakeImFault::Ok().After(milliseconds(300)));
  MakeHook(Options(SyncPublishMode::kInline));
  CommitCommand("earlier-c0", "earlier-room", 1);  // its sync publish fails
  hook_im_.ClearFaults();
  const CommitResult second = CommitCommand("earlier-c1", "earlier-room", 2);
  ASSERT_EQ(second.events.size(), 3u);
  EXPECT_NE(second.events[0].error.find("earlier event"), std::string::npos)
      << second.events[0].error;
  ExpectAllDeliveredSoon("earlier-c");
}

// A hook that died between commit and release: its rows stay leased until the lease ends, and no
// one wakes the relay then. The relay saw the lease in a claim another wake-up started and starts
// a round when it runs out (created_at_ms is the lease's end here).
TEST_F(WakePathsTest, TheSyncLeaseRunningOut) {
  InsertPending("dead-lease-e0", "dead-room", 1500, true);
  InsertPending("dead-lease-e1", "dead-room", 1500, true);
  InsertPending("dead-other", "other-room", 0);  // another commit's row and its wake-up
  internal::WakeSender(socket_path_).Notify();
  ASSERT_TRUE(Eventually([&] { return Published("dead-other"); }, kDeliveredWithin))
      << relay_->StderrTail();
  ExpectAllDeliveredSoon("dead-lease-");
}

// The background queue is full while earlier commands of the room are queued or being published:
// the rows left for the relay wait behind them (per-room order) and the relay is woken again when
// the room's last queued command is done, not at its next poll.
TEST_F(WakePathsTest, FullBackgroundQueueBehindTheRoomsQueuedCommands) {
  hook_im_.SetDefaultFault(FakeImFault::Ok().After(milliseconds(150)));
  HookOptions options = Options(SyncPublishMode::kBackground);
  options.background_queue = 1;
  // The queued commands' lease ends long after the poll-free bound: only a wake-up delivers.
  options.sync_publish_timeout = milliseconds(20000);
  MakeHook(options);
  bool left = false;
  for (int i = 0; i < 4; ++i) {
    const CommitResult result = CommitCommand("full-c" + std::to_string(i), "full-room", i + 1);
    for (const EventDelivery& e : result.events) left = left || e.state == DeliveryState::kPending;
  }
  EXPECT_TRUE(left) << "no command found the queue full";
  ExpectAllDeliveredSoon("full-c");
}

}  // namespace
}  // namespace room_outbox::testing
