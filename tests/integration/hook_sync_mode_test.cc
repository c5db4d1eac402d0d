// HookOptions::sync_publish = kBackground and kOff, and the hook's wake-up of outbox-relay
// (HookOptions::wake_socket), against the test MariaDB, the fake IM and real relays.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "room_outbox/hook.h"
#include "support/delivery_checks.h"
#include "support/fake_im_server.h"
#include "support/relay_process.h"
#include "support/test_database.h"
#include "support/wait.h"
#include "support/wake_sink.h"

namespace room_outbox::testing {
namespace {

using std::chrono::milliseconds;
using SteadyClock = std::chrono::steady_clock;

class HookSyncModeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(db_.valid());
    ASSERT_TRUE(im_.running()) << im_.start_error();
    ASSERT_TRUE(wake_.bound()) << wake_.path();
  }

  HookOptions Options(SyncPublishMode mode, milliseconds sync_publish_timeout = milliseconds(500)) {
    HookOptions options;
    options.mysql = db_.Options();
    options.tencent_im = im_.ClientOptions();
    options.sync_publish_timeout = sync_publish_timeout;
    options.sync_publish = mode;
    options.node_id = "node-test";
    options.wake_socket = wake_.path();
    return options;
  }
  std::unique_ptr<Hook> NewHook(const HookOptions& options) {
    Error error;
    auto hook = CreateHook(options, &error);
    EXPECT_TRUE(hook) << error.message;
    return hook;
  }

  // Command `n` of `room` with `events` events, room_seq n + 1.
  struct Made {
    Command command;
    std::vector<Event> events;
  };
  static Made Make(const std::string& tag, const std::string& room, int n, int events) {
    Made m;
    m.command = Command{
        "cmd-" + tag + "-" + room + "-" + std::to_string(n), room, "SendGift", "req", n + 1, "{}"};
    for (int k = 0; k < events; ++k) {
      m.events.push_back(
          Event{m.command.command_id + "-e" + std::to_string(k), "RoomGiftSent", n + 1, 0, "{}"});
    }
    return m;
  }

  // Commits `commands` commands in each of `rooms` rooms, interleaved; returns the event ids per
  // room in commit order and checks each result's states are `expected`.
  std::map<std::string, std::vector<std::string>> CommitMany(Hook& hook, const std::string& tag,
                                                             int rooms, int commands,
                                                             DeliveryState expected) {
    std::map<std::string, std::vector<std::string>> order;
    for (int n = 0; n < commands; ++n) {
      for (int r = 0; r < rooms; ++r) {
        const std::string room = tag + "-room-" + std::to_string(r);
        Made m = Make(tag, room, n, 2);
        CommitResult result = hook.Commit(m.command, m.events);
        EXPECT_EQ(result.status, CommitStatus::kCommitted) << result.error.message;
        for (const EventDelivery& d : result.events) {
          EXPECT_EQ(d.state, expected) << d.event_id << ": " << d.error;
          order[room].push_back(d.event_id);
        }
      }
    }
    return order;
  }

  int64_t Count(const std::string& where) {
    return db_.Scalar("SELECT COUNT(*) FROM room_outbox WHERE " + where);
  }

  // Every event delivered exactly once, each room's in commit order.
  void ExpectExactlyOnceInOrder(const std::map<std::string, std::vector<std::string>>& order) {
    const auto delivered = DeliveredByRoom(im_);
    for (const auto& [room, ids] : order) {
      ASSERT_EQ(delivered.count(room), 1u) << room;
      std::vector<std::string> got;
      for (const FakeImRequest& request : delivered.at(room)) got.push_back(request.event_id);
      EXPECT_EQ(got, ids) << room;
    }
    EXPECT_EQ(im_.Stats().duplicates, 0u);
  }

  void DrainWithRelay() {
    RelayProcessOptions options;
    options.args = {"--once"};
    RelayProcess relay(db_, im_, options);
    ASSERT_TRUE(relay.Start());
    auto exit = relay.Wait(milliseconds(30000));
    ASSERT_TRUE(exit) << relay.StderrTail();
    EXPECT_EQ(exit->exit_code, 0) << relay.StderrTail();
  }

  TestDatabase db_;
  FakeImServer im_;
  WakeSink wake_;
};

TEST_F(HookSyncModeTest, BackgroundPublishesEveryEventOnceInRoomOrderAndDoesNotWakeTheRelay) {
  auto hook = NewHook(Options(SyncPublishMode::kBackground));
  ASSERT_TRUE(hook);
  const auto order = CommitMany(*hook, "bg", 3, 8, DeliveryState::kQueued);
  const int64_t total = 3 * 8 * 2;
  // The hook's own thread marks them; no relay runs.
  EXPECT_TRUE(
      Eventually([&] { return Count("status = 'published'") == total; }, milliseconds(20000)))
      << Count("status = 'published'") << " of " << total << " published";
  EXPECT_EQ(Count("claim_token IS NOT NULL"), 0);
  EXPECT_EQ(im_.Stats().requests, static_cast<size_t>(total));
  ExpectExactlyOnceInOrder(order);
  EXPECT_EQ(wake_.Drain(), 0u) << "woke the relay although everything was published";
}

TEST_F(HookSyncModeTest, OffLeavesEveryEventToTheRelayWhichDeliversEachOnceInRoomOrder) {
  auto hook = NewHook(Options(SyncPublishMode::kOff));
  ASSERT_TRUE(hook);
  auto order = CommitMany(*hook, "off", 3, 5, DeliveryState::kPending);
  EXPECT_EQ(im_.Stats().requests, 0u);
  EXPECT_EQ(Count("status = 'pending' AND claim_token IS NULL AND retry_count = 0"), 3 * 5 * 2);
  // The socket's queue holds only a few datagrams (the kernel's max_dgram_qlen): the rest were
  // refused, which never touched a commit.
  EXPECT_GE(wake_.Drain(), 1u);
  Made one = Make("off", "off-room-single", 0, 1);
  CommitResult single = hook->Commit(one.command, one.events);
  ASSERT_EQ(single.status, CommitStatus::kCommitted);
  EXPECT_EQ(single.events[0].error, "sync publish off: left for the relay");
  EXPECT_EQ(wake_.Drain(), 1u) << "one wake-up per command that left rows";
  order["off-room-single"].push_back(one.events[0].event_id);
  DrainWithRelay();
  EXPECT_EQ(Count("status = 'published'"), 3 * 5 * 2 + 1);
  ExpectExactlyOnceInOrder(order);
}

TEST_F(HookSyncModeTest, BackgroundWithImFailingReleasesTheRowsUnchargedAndWakesTheRelay) {
  im_.SetDefaultFault(FakeImFault::ImError(10002, "internal error"));
  auto hook = NewHook(Options(SyncPublishMode::kBackground));
  ASSERT_TRUE(hook);
  std::vector<std::string> ids;
  for (int n = 0; n < 6; ++n) {
    Made m = Make("fail", "fail-room", n, 2);
    CommitResult result = hook->Commit(m.command, m.events);
    ASSERT_EQ(result.status, CommitStatus::kCommitted) << result.error.message;
    for (const EventDelivery& d : result.events) {
      // Queued, or left at once: behind the room's released rows, or the sync breaker opened.
      EXPECT_TRUE(d.state == DeliveryState::kQueued || d.state == DeliveryState::kPending)
          << d.error;
      ids.push_back(d.event_id);
    }
  }
  // Released, not marked failed: due for the relay, retry_count unchanged, no token.
  EXPECT_TRUE(Eventually(
      [&] { return Count("status = 'pending' AND claim_token IS NULL AND retry_count = 0") == 12; },
      milliseconds(10000)));
  EXPECT_EQ(Count("status = 'published'"), 0);
  EXPECT_GE(im_.Stats().requests, 1u);
  EXPECT_TRUE(Eventually([&] { return wake_.Drain() > 0; }, milliseconds(5000)));

  im_.ClearFaults();
  DrainWithRelay();
  EXPECT_EQ(Count("status = 'published'"), 12);
  // The relay kept the room's order: each event's first delivery after the previous one's.
  std::vector<std::string> firsts;
  const auto delivered = DeliveredByRoom(im_);
  ASSERT_EQ(delivered.count("fail-room"), 1u);
  for (const FakeImRequest& r : delivered.at("fail-room")) {
    if (std::find(firsts.begin(), firsts.end(), r.event_id) == firsts.end()) {
      firsts.push_back(r.event_id);
    }
  }
  EXPECT_EQ(firsts, ids);
}

TEST_F(HookSyncModeTest, HookDestroyedMidPublishLeavesItsRowsToTheRelayWithoutLoss) {
  im_.SetDefaultFault(FakeImFault::Ok().After(milliseconds(300)));
  auto hook = NewHook(Options(SyncPublishMode::kBackground, milliseconds(500)));
  ASSERT_TRUE(hook);
  std::vector<std::string> ids;
  for (int r = 0; r < 4; ++r) {
    Made m = Make("kill", "kill-room-" + std::to_string(r), 0, 3);
    CommitResult result = hook->Commit(m.command, m.events);
    ASSERT_EQ(result.status, CommitStatus::kCommitted) << result.error.message;
    for (const EventDelivery& d : result.events) ids.push_back(d.event_id);
  }
  ASSERT_TRUE(Eventually([&] { return im_.Stats().requests >= 1; }, milliseconds(5000)));
  const auto start = SteadyClock::now();
  hook.reset();  // mid-publish: the first request is under way
  const auto took = std::chrono::duration_cast<milliseconds>(SteadyClock::now() - start).count();
  std::printf(
      "Hook destroyed mid-publish (IM answering in 300 ms, sync_publish_timeout 500ms): "
      "the destructor returned in %lld ms; published by the hook %lld of 12\n",
      static_cast<long long>(took), static_cast<long long>(Count("status = 'published'")));
  // Generous: bounded by the commands' deadlines (500 ms after each commit), never by IM.
  EXPECT_LT(took, 5000);
  // Nothing stays leased to the dead hook: handed back to the relay.
  EXPECT_EQ(Count("status = 'pending' AND claim_token IS NOT NULL"), 0);
  EXPECT_GT(wake_.Drain(), 0u);

  const size_t hook_requests = im_.Stats().requests;
  im_.ClearFaults();
  DrainWithRelay();
  EXPECT_EQ(Count("status = 'published'"), 12);
  size_t duplicated = 0;
  for (const std::string& id : ids) {
    const size_t n = im_.RequestsFor(id).size();
    EXPECT_GE(n, 1u) << id << " lost";
    EXPECT_LE(n, 2u) << id;
    duplicated += n > 1 ? 1 : 0;
  }
  // A duplicate only for a request the hook gave up on without an answer (one per command at
  // most: a command's later rows are released without a request).
  EXPECT_LE(duplicated, 4u);
  EXPECT_LE(duplicated, hook_requests);
}

TEST_F(HookSyncModeTest, AFullBackgroundQueueWritesTheRowsUnleasedForTheRelay) {
  im_.SetDefaultFault(FakeImFault::Ok().After(milliseconds(200)));
  HookOptions options = Options(SyncPublishMode::kBackground, milliseconds(2000));
  options.background_queue = 1;
  auto hook = NewHook(options);
  ASSERT_TRUE(hook);
  size_t queued = 0, full = 0;
  std::map<std::string, std::vector<std::string>> order;
  for (int r = 0; r < 6; ++r) {
    const std::string room = "full-room-" + std::to_string(r);
    Made m = Make("full", room, 0, 1);
    CommitResult result = hook->Commit(m.command, m.events);
    ASSERT_EQ(result.status, CommitStatus::kCommitted) << result.error.message;
    const EventDelivery& d = result.events[0];
    order[room].push_back(d.event_id);
    if (d.state == DeliveryState::kQueued) {
      ++queued;
    } else {
      EXPECT_EQ(d.state, DeliveryState::kPending);
      EXPECT_EQ(d.error, "background publish queue full: left for the relay");
      ++full;
    }
  }
  // One command published, at most one waiting: the others found the queue full.
  EXPECT_GE(queued, 1u);
  EXPECT_GE(full, 3u);
  EXPECT_EQ(Count("status = 'pending' AND claim_token IS NULL AND retry_count = 0"),
            static_cast<int64_t>(full))
      << "rows of a full queue are written due at once";
  EXPECT_GE(wake_.Drain(), 1u);
  ASSERT_TRUE(
      Eventually([&] { return Count("status = 'published'") == static_cast<int64_t>(queued); },
                 milliseconds(10000)));
  im_.ClearFaults();
  DrainWithRelay();
  EXPECT_EQ(Count("status = 'published'"), 6);
  ExpectExactlyOnceInOrder(order);
}

TEST_F(HookSyncModeTest, InlineWakesTheRelayOnlyWhenItLeftRows) {
  auto hook = NewHook(Options(SyncPublishMode::kInline));
  ASSERT_TRUE(hook);
  Made ok = Make("inl", "inl-room-a", 0, 2);
  CommitResult published = hook->Commit(ok.command, ok.events);
  ASSERT_EQ(published.status, CommitStatus::kCommitted);
  EXPECT_EQ(published.events[1].state, DeliveryState::kPublished) << published.events[1].error;
  EXPECT_EQ(wake_.Drain(), 0u);

  im_.SetDefaultFault(FakeImFault::HttpStatus(502));
  Made failing = Make("inl", "inl-room-b", 0, 2);
  CommitResult left = hook->Commit(failing.command, failing.events);
  ASSERT_EQ(left.status, CommitStatus::kCommitted);
  EXPECT_EQ(left.events[0].state, DeliveryState::kPending);
  EXPECT_EQ(wake_.Drain(), 1u);
}

TEST_F(HookSyncModeTest, AWakePathWithNothingBoundNeverFailsACommit) {
  for (SyncPublishMode mode : {SyncPublishMode::kOff, SyncPublishMode::kBackground}) {
    HookOptions options = Options(mode);
    options.wake_socket = wake_.unbound_path();
    im_.SetDefaultFault(FakeImFault::ImError(10002, "internal error"));
    auto hook = NewHook(options);
    ASSERT_TRUE(hook);
    for (int n = 0; n < 3; ++n) {
      Made m = Make(SyncPublishModeName(mode), "nobody-room", n, 2);
      CommitResult result = hook->Commit(m.command, m.events);
      EXPECT_EQ(result.status, CommitStatus::kCommitted) << result.error.message;
      EXPECT_EQ(result.events.size(), 2u);
    }
  }
  EXPECT_EQ(Count("1 = 1"), 12);
}

TEST_F(HookSyncModeTest, CreateHookRefusesAWakePathThatCannotNameASocket) {
  HookOptions options = Options(SyncPublishMode::kOff);
  options.wake_socket = "run/wake.sock";
  Error error;
  EXPECT_EQ(CreateHook(options, &error), nullptr);
  EXPECT_EQ(error.code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(error.message,
            "HookOptions::wake_socket: wake socket path must be absolute: \"run/wake.sock\"");
}

}  // namespace
}  // namespace room_outbox::testing
