// A relay daemon's node lock (store/node_lock.h) with real outbox-relay processes, the test
// MariaDB and the fake Tencent IM: a relay killed mid-drain and restarted at once with the same
// node_id takes back its predecessor's leases at once; a second live relay with that node_id is
// refused at start (exit code 2); a relay whose lock is taken from it claims nothing until it
// holds the lock again.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "store/node_lock.h"
#include "core/mysql/outbox_sql.h"
#include "support/fake_im_server.h"
#include "support/mysql_admin.h"
#include "support/relay_process.h"
#include "support/test_database.h"
#include "support/test_rows.h"
#include "support/wait.h"

namespace room_outbox::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using SteadyClock = std::chrono::steady_clock;

constexpr const char* kNodeId = "node-lock-test";

// A daemon with node_id kNodeId: batches of 100, a long lease (60 s) so that a lease left behind
// is unmistakable, publish_timeout 5 s, at most 8 sends in flight.
RelayProcessOptions DaemonOptions() {
  RelayProcessOptions options;
  options.node_id = kNodeId;
  options.log_level = "debug";
  options.mysql = {{"connect_timeout", "\"2s\""}};
  options.outbox_worker = {{"poll_interval", "\"200ms\""}, {"batch_size", "100"},
                           {"publish_timeout", "\"5s\""},  {"lease", "\"60s\""},
                           {"max_in_flight", "8"},         {"room_min_interval", "\"0ms\""}};
  return options;
}

class NodeLockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(db_.valid());
    ASSERT_TRUE(im_.running()) << im_.start_error();
  }

  std::unique_ptr<RelayProcess> Start(RelayProcessOptions options = DaemonOptions()) {
    auto relay = std::make_unique<RelayProcess>(db_, im_, std::move(options));
    EXPECT_TRUE(relay->Start());
    return relay;
  }

  // `count` pending rows, due now, spread over `rooms` rooms ("<prefix>-room-<k>").
  void Insert(const std::string& prefix, int count, int rooms) {
    for (int i = 0; i < count; ++i) {
      const std::string event_id = prefix + "-" + std::to_string(i);
      const std::string room = prefix + "-room-" + std::to_string(i % rooms);
      db_.Exec(
          "INSERT INTO room_outbox (event_id, event_type, room_id, command_id, request_id, "
          "envelope, status, retry_count, next_attempt_at_ms, created_at_ms, updated_at_ms) "
          "VALUES (" +
          SqlQuote(event_id) + ", 'RoomGiftSent', " + SqlQuote(room) + ", " +
          SqlQuote("cmd-" + event_id) + ", '', " +
          SqlQuote(TestEnvelope(event_id, room, i / rooms + 1, "room-service-test")) +
          ", 'pending', 0, 0, " + kServerNowSql + ", " + kServerNowSql + ")");
    }
  }
  int64_t Count(const std::string& where) {
    return db_.Scalar("SELECT COUNT(*) FROM room_outbox WHERE " + where);
  }
  std::string LockName() const { return relay::NodeLockName(db_.name(), kNodeId); }

  TestDatabase db_;
  FakeImServer im_;
};

TEST_F(NodeLockTest, ARelayKilledMidDrainAndRestartedAtOnceResumesEveryRoomLongBeforeTheLease) {
  constexpr int kRows = 300;
  constexpr int kRooms = 30;
  Insert("kill", kRows, kRooms);
  // IM answers slowly: the first relay's claims stay leased while it waits.
  im_.SetDefaultFault(FakeImFault::Ok().After(milliseconds(2000)));
  auto first = Start();
  ASSERT_TRUE(im_.WaitForRequests(4, seconds(30))) << first->StderrTail();
  ASSERT_TRUE(first->Kill()) << first->StderrTail();
  // What the dead run left: rows leased under its node's tokens, most of the lease still to run.
  const std::string left_leased =
      "status = 'pending' AND claim_token LIKE 'relay-%' AND next_attempt_at_ms > " +
      std::string(kServerNowSql) + " + 30000";
  const int64_t leased = Count(left_leased);
  ASSERT_GT(leased, 0) << "the killed relay left no lease to take back";
  const int64_t lease_left_ms = db_.Scalar("SELECT MAX(next_attempt_at_ms) - " +
                                           std::string(kServerNowSql) +
                                           " FROM room_outbox WHERE " + left_leased);
  const int64_t rooms_leased =
      db_.Scalar("SELECT COUNT(DISTINCT room_id) FROM room_outbox WHERE " + left_leased);

  im_.SetDefaultFault(FakeImFault::Ok());
  const auto restarted = SteadyClock::now();
  auto second = Start();
  ASSERT_TRUE(Eventually([&] { return Count("status = 'published'") == kRows; }, seconds(45)))
      << Count("status = 'published'") << " of " << kRows << " published\n"
      << second->StderrTail();
  const auto all_delivered = SteadyClock::now();
  EXPECT_LT(std::chrono::duration_cast<milliseconds>(all_delivered - restarted).count(),
            lease_left_ms)
      << "delivered only once the dead run's leases ran out";

  // Each room's first delivery after the restart, and the slowest of them.
  std::map<std::string, SteadyClock::time_point> first_after;
  for (const FakeImRequest& request : im_.Requests()) {
    if (request.arrived < restarted) continue;
    auto [it, inserted] = first_after.emplace(request.room_id, request.arrived);
    if (!inserted) it->second = std::min(it->second, request.arrived);
  }
  milliseconds slowest{0};
  for (const auto& [room, at] : first_after) {
    slowest = std::max(slowest, std::chrono::duration_cast<milliseconds>(at - restarted));
  }
  std::printf(
      "node lock: %lld rows of %lld rooms left leased by the killed relay (%lld ms of lease "
      "left); after the restart, slowest room's first delivery %lld ms, all %d delivered in "
      "%lld ms; %zu requests for %d events\n",
      static_cast<long long>(leased), static_cast<long long>(rooms_leased),
      static_cast<long long>(lease_left_ms), static_cast<long long>(slowest.count()), kRows,
      static_cast<long long>(
          std::chrono::duration_cast<milliseconds>(all_delivered - restarted).count()),
      im_.Stats().requests, kRows);
  EXPECT_EQ(first_after.size(), static_cast<size_t>(kRooms));
  EXPECT_EQ(second->CountLogLines({"node lock taken", "released=" + std::to_string(leased)}), 1u)
      << second->StderrTail();
  // Sent twice at most: what was in flight, unanswered, when the first relay died.
  EXPECT_EQ(im_.Stats().unique_event_ids, static_cast<size_t>(kRows));
  EXPECT_LE(im_.Stats().requests, static_cast<size_t>(kRows + 8));
  auto exit = second->Stop(seconds(20));
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->exit_code, 0) << Describe(*exit) << "\n" << second->StderrTail();
}

TEST_F(NodeLockTest, ASecondRelayWithTheSameNodeIdIsRefusedAndTheFirstKeepsDelivering) {
  auto first = Start();
  ASSERT_TRUE(Eventually([&] { return first->CountLogLines({"node lock taken"}) == 1; },
                         seconds(30)))
      << first->StderrTail();
  auto second = Start();
  auto exit = second->Wait(seconds(30));
  ASSERT_TRUE(exit) << second->StderrTail();
  EXPECT_EQ(exit->exit_code, 2) << Describe(*exit);
  EXPECT_EQ(second->CountLogLines({"refused: node_id in use",
                                   "node_id \\\"node-lock-test\\\" is in use by another running "
                                   "relay",
                                   "node_id must be unique per relay"}),
            1u)
      << second->StderrTail();
  Insert("kept", 3, 3);
  EXPECT_TRUE(Eventually([&] { return Count("status = 'published'") == 3; }, seconds(30)))
      << first->StderrTail();
  EXPECT_EQ(first->CountLogLines({"outbox claim failed"}), 0u) << first->StderrTail();
}

// The lock's connection is killed and the lock taken by someone else (here the test's own
// connection) before the relay's next claim: the relay claims nothing and says why; once the lock
// is free it takes it again and delivers.
TEST_F(NodeLockTest, ARelayThatLostItsLockClaimsNothingUntilItHoldsItAgain) {
  RelayProcessOptions options = DaemonOptions();
  options.outbox_worker["poll_interval"] = "\"2s\"";
  auto relay = Start(options);
  const std::string name = SqlQuote(LockName());
  ASSERT_TRUE(Eventually([&] { return db_.Scalar("SELECT IS_USED_LOCK(" + name + ")") > 0; },
                         seconds(30)))
      << relay->StderrTail();
  // The relay takes the lock back at its next claim: should that come between the KILL and the
  // test's GET_LOCK, the test kills the new connection too.
  bool taken = false;
  for (int attempt = 0; attempt < 5 && !taken; ++attempt) {
    const int64_t holder = db_.Scalar("SELECT IS_USED_LOCK(" + name + ")");
    if (holder > 0) db_.Exec("KILL " + std::to_string(holder));
    taken = db_.Scalar("SELECT GET_LOCK(" + name + ", 1)") == 1;
  }
  ASSERT_TRUE(taken) << relay->StderrTail();
  const std::vector<std::string> refused = {"outbox claim failed", "node_id must be unique"};
  ASSERT_TRUE(Eventually([&] { return relay->CountLogLines(refused) > 0; }, seconds(30)))
      << relay->StderrTail();
  Insert("held", 2, 2);
  // A claim after the rows were there: it fails again and takes nothing.
  const size_t before = relay->CountLogLines(refused);
  ASSERT_TRUE(Eventually([&] { return relay->CountLogLines(refused) > before; }, seconds(30)))
      << relay->StderrTail();
  EXPECT_EQ(Count("status = 'pending' AND claim_token IS NULL"), 2);
  EXPECT_TRUE(im_.Requests().empty());

  EXPECT_EQ(db_.Scalar("SELECT RELEASE_LOCK(" + name + ")"), 1);
  EXPECT_TRUE(Eventually([&] { return Count("status = 'published'") == 2; }, seconds(60)))
      << relay->StderrTail();
  EXPECT_EQ(relay->CountLogLines({"node lock taken after start"}), 1u) << relay->StderrTail();
}

// The release of an earlier run's leases walks idx_claim_token's range over the node's token
// prefix (schema 010; its cost follows the node's leased rows, not the due backlog nor the
// published history), and gives back that run's rows only: this run's, another node's and a sync
// attempt's leases stay.
TEST(NodeLockReleaseTest, TheReleaseWalksThePendingRowsNotYetDueAndTakesOnlyEarlierRuns) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  // 20,000 rows: 90% published, the pending ones due long ago but for 60 leased far ahead.
  db.Exec(
      "INSERT INTO room_outbox (event_id, event_type, room_id, command_id, envelope, status, "
      "next_attempt_at_ms, claim_token, created_at_ms, updated_at_ms) "
      "SELECT CONCAT('e', seq), 'T', CONCAT('room-', seq % 97), CONCAT('c', seq), '{}', "
      "IF(seq % 10 = 0, 'pending', 'published'), "
      "IF(seq % 250 = 0 AND seq % 1000 <> 750, 9000000000000, seq), "
      "CASE WHEN seq % 2000 = 0 THEN CONCAT('relay-0123456789abcdef-11111111-', seq) "
      "WHEN seq % 1000 = 0 THEN CONCAT('relay-0123456789abcdef-00000000-', seq) "
      "WHEN seq % 1000 = 500 THEN CONCAT('relay-fedcba9876543210-00000000-', seq) "
      "WHEN seq % 1000 = 250 THEN MD5(seq) END, seq, seq "
      "FROM seq_1_to_20000");
  db.Exec("ANALYZE TABLE room_outbox");
  const std::vector<std::string> patterns = {"'relay-0123456789abcdef-%'",
                                             "'relay-0123456789abcdef-11111111-%'"};
  auto rows = db.Query("EXPLAIN " + WithLiterals(core::sql::kReleaseNodeLeases, patterns));
  ASSERT_FALSE(rows.empty());
  // EXPLAIN columns: id, select_type, table, type, possible_keys, key, key_len, ref, rows, Extra.
  EXPECT_EQ(rows[0][5].value_or(""), "idx_claim_token");
  EXPECT_EQ(rows[0][3].value_or(""), "range");
  db.Exec(WithLiterals(core::sql::kReleaseNodeLeases, patterns));
  EXPECT_EQ(db.Scalar("SELECT COUNT(*) FROM room_outbox WHERE claim_token LIKE "
                      "'relay-0123456789abcdef-00000000-%'"),
            0);
  // The 10 rows of the earlier run are due now; the 50 others keep their token and lease.
  EXPECT_EQ(db.Scalar("SELECT COUNT(*) FROM room_outbox WHERE claim_token IS NOT NULL AND "
                      "next_attempt_at_ms = 9000000000000"),
            50);
  EXPECT_EQ(db.Scalar("SELECT COUNT(*) FROM room_outbox WHERE status = 'pending' AND "
                      "claim_token IS NULL AND next_attempt_at_ms > 20000 AND "
                      "next_attempt_at_ms <= " +
                      std::string(kServerNowSql)),
            10);
}

}  // namespace
}  // namespace room_outbox::testing
