// The relay's side of the failure scopes (Tencent IM's answers by scope, docs/relay.md) with the
// real outbox-relay process, the test MariaDB and the fake IM: a hot room refused with MsgFreqCtrl
// does not slow the quiet rooms beside it, and an app-wide error opens the circuit breaker (no
// sends, rows not charged) until IM recovers.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "room_outbox/hook.h"
#include "support/fake_im_server.h"
#include "support/relay_process.h"
#include "support/test_database.h"
#include "support/wait.h"

namespace room_outbox::testing {
namespace {

using std::chrono::milliseconds;
using SteadyClock = std::chrono::steady_clock;

int64_t MsSince(SteadyClock::time_point start) {
  return std::chrono::duration_cast<milliseconds>(SteadyClock::now() - start).count();
}

// Pending rows written by the hook with no sync publish: due for the relay at once.
void CommitRows(const TestDatabase& db, const FakeImServer& im, const std::string& room,
                int rows, const std::string& tag) {
  HookOptions options;
  options.mysql = db.Options();
  options.tencent_im = im.ClientOptions();
  options.node_id = "node-test";
  options.sync_publish = SyncPublishMode::kOff;
  Error error;
  auto hook = CreateHook(options, &error);
  ASSERT_TRUE(hook) << error.message;
  for (int i = 0; i < rows; ++i) {
    const std::string id = tag + "-" + room + "-" + std::to_string(i);
    CommitResult result =
        hook->Commit(Command{"cmd-" + id, room, "SendGift", "req-1", i + 1, "{}"},
                     {Event{"evt-" + id, "RoomGiftSent", i + 1, 0, R"({"gift":"rose"})"}});
    ASSERT_EQ(result.status, CommitStatus::kCommitted) << result.error.message;
  }
}

int64_t PublishedLike(TestDatabase& db, const std::string& pattern) {
  return db.Scalar("SELECT COUNT(*) FROM room_outbox WHERE status = 'published' AND event_id LIKE '" +
                   pattern + "'");
}

constexpr int kQuietRooms = 20;
constexpr int kRowsPerQuietRoom = 5;

// Starts a relay and returns how long (ms) until every quiet row tagged `tag` is published.
int64_t DrainQuietRooms(TestDatabase& db, const FakeImServer& im, const std::string& tag,
                        RelayProcess& relay) {
  const auto start = SteadyClock::now();
  EXPECT_TRUE(relay.Start());
  const std::string pattern = "evt-" + tag + "-quiet-%";
  EXPECT_TRUE(Eventually([&] { return PublishedLike(db, pattern) == kQuietRooms * kRowsPerQuietRoom; },
                         milliseconds(30000)))
      << relay.StderrTail();
  (void)im;
  return MsSince(start);
}

TEST(RelayScopesTest, AHotRoomRefusedWithMsgFreqCtrlDoesNotSlowTheQuietRooms) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  FakeImServerOptions server;
  server.latency = milliseconds(20);
  FakeImServer im(server);
  ASSERT_TRUE(im.running()) << im.start_error();
  const RelayProcessOptions options{};

  // Alone: the quiet rooms' rows and nothing else.
  for (int r = 0; r < kQuietRooms; ++r) {
    CommitRows(db, im, "quiet-" + std::to_string(r), kRowsPerQuietRoom, "alone");
  }
  int64_t alone_ms = 0;
  {
    RelayProcess relay(db, im, options);
    alone_ms = DrainQuietRooms(db, im, "alone", relay);
    ASSERT_TRUE(relay.Stop(milliseconds(10000)));
  }

  // Beside a hot room whose every send IM refuses with MsgFreqCtrl. Its rows come first, so
  // every claim meets the hot room before the quiet ones.
  const std::string hot = "hot-room";
  CommitRows(db, im, hot, 20, "beside");
  for (int r = 0; r < kQuietRooms; ++r) {
    CommitRows(db, im, "quiet-" + std::to_string(r), kRowsPerQuietRoom, "beside");
  }
  im.SetGroupFault(hot, FakeImFault::FreqCtrl());
  RelayProcess relay(db, im, options);
  const int64_t beside_ms = DrainQuietRooms(db, im, "beside", relay);

  std::printf("quiet rooms (%d x %d rows) drained alone in %lld ms, beside the hot room in %lld ms "
              "(x%.2f)\n",
              kQuietRooms, kRowsPerQuietRoom, static_cast<long long>(alone_ms),
              static_cast<long long>(beside_ms),
              alone_ms > 0 ? static_cast<double>(beside_ms) / static_cast<double>(alone_ms) : 0.0);
  EXPECT_EQ(PublishedLike(db, "evt-beside-quiet-%"), kQuietRooms * kRowsPerQuietRoom);
  // Refused all along: none of the hot room's rows is published, its head was tried (charged),
  // the rows behind it were never sent out of order.
  EXPECT_EQ(PublishedLike(db, "evt-beside-hot-room-%"), 0);
  EXPECT_GT(db.Scalar("SELECT retry_count FROM room_outbox WHERE event_id = "
                      "'evt-beside-hot-room-0'"),
            0);
  for (const FakeImRequest& request : im.Requests()) {
    if (request.room_id == hot) {
      EXPECT_EQ(request.event_id, "evt-beside-hot-room-0");
    }
  }
  // Once the room is no longer refused, it drains in order.
  im.SetGroupFault(hot, std::nullopt);
  EXPECT_TRUE(Eventually([&] { return PublishedLike(db, "evt-beside-hot-room-%") == 20; },
                         milliseconds(30000)))
      << relay.StderrTail();
  ASSERT_TRUE(relay.Stop(milliseconds(10000)));
}

TEST(RelayScopesTest, AnAppWideErrorOpensTheBreakerSoRowsAreNeitherSentNorCharged) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  FakeImServer im;
  ASSERT_TRUE(im.running()) << im.start_error();
  constexpr int kRooms = 20;
  for (int r = 0; r < kRooms; ++r) {
    CommitRows(db, im, "room-" + std::to_string(r), 2, "app");
  }
  // 70003 (UserSig invalid): nobody can succeed. The test's fault window is 3 s with a 1 s
  // cooldown instead of 15 s with 60 s: the same sequence (trip, probes that fail, recovery).
  im.SetDefaultFault(FakeImFault::ImError(70003, "invalid usersig"));
  RelayProcessOptions options;
  options.outbox_worker["max_in_flight"] = "4";
  options.tencent_im["breaker_cooldown"] = "\"1s\"";
  RelayProcess relay(db, im, options);
  ASSERT_TRUE(relay.Start());
  ASSERT_TRUE(Eventually([&] { return im.Stats().requests > 0; }, milliseconds(10000)))
      << relay.StderrTail();
  std::this_thread::sleep_for(milliseconds(3000));
  im.ClearFaults();

  ASSERT_TRUE(Eventually([&] { return PublishedLike(db, "evt-app-%") == 2 * kRooms; },
                         milliseconds(20000)))
      << relay.StderrTail();
  size_t refused = 0;  // requests answered 70003: the tripping wave and the failed probes
  for (const FakeImRequest& request : im.Requests()) {
    refused += request.answer == FakeImFault::Kind::kImError ? 1 : 0;
  }
  const int64_t charged = db.Scalar("SELECT SUM(retry_count) FROM room_outbox");
  const int64_t rows_charged = db.Scalar("SELECT COUNT(*) FROM room_outbox WHERE retry_count > 0");
  std::printf("app-wide error 70003 for 3 s (breaker_cooldown 1s, max_in_flight 4): %zu requests "
              "reached IM while it failed; %lld attempts charged to %lld of %d rows; %zu requests "
              "in all\n",
              refused, static_cast<long long>(charged), static_cast<long long>(rows_charged),
              2 * kRooms, im.Stats().requests);
  // The tripping wave (at most max_in_flight) plus about one probe per cooldown.
  EXPECT_LE(refused, 4u + 5u);
  // Only requests that reached IM were charged: rows the open breaker kept back were released
  // with retry_count unchanged, however many rounds claimed them meanwhile.
  EXPECT_EQ(static_cast<size_t>(charged), refused);
  EXPECT_EQ(relay.CountLogLines({"IM circuit breaker open", "im_error_code=70003"}), 1u)
      << relay.StderrTail();
  EXPECT_EQ(relay.CountLogLines({"IM circuit breaker closed"}), 1u) << relay.StderrTail();
  ASSERT_TRUE(relay.Stop(milliseconds(10000)));
}

}  // namespace
}  // namespace room_outbox::testing
