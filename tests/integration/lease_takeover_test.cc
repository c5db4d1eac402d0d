// Any relay takes back the leases of a relay proven gone, whatever node_id it ran under
// (daemon/lease_takeover.h), with real outbox-relay processes, the test MariaDB and the fake
// Tencent IM: a relay killed (SIGKILL) mid-drain of 100 rooms is replaced at once by a relay of
// another node_id, which delivers every row, in room order, long before the dead relay's 60 s
// leases would have run out; a live relay's leases are left alone by a relay beside it, which
// takes them back within seconds once that relay is killed, and a live relay whose lock
// connection is cut keeps its leases; the give-back walks only the rows of the gone run.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/mysql/outbox_sql.h"
#include "store/node_lock.h"
#include "support/delivery_checks.h"
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

// The lease every relay here takes: a row left leased by a dead relay is unmistakable, and "long
// before the lease runs out" is half of it, a margin no load eats.
constexpr int64_t kLeaseMs = 60000;

// A daemon with `node_id`: batches of 100, a 60 s lease, publish_timeout 5 s, at most 8 sends in
// flight.
RelayProcessOptions DaemonOptions(const std::string& node_id) {
  RelayProcessOptions options;
  options.node_id = node_id;
  options.mysql = {{"connect_timeout", "\"2s\""}};
  options.outbox_worker = {{"poll_interval", "\"200ms\""}, {"batch_size", "100"},
                           {"publish_timeout", "\"5s\""},  {"lease", "\"60s\""},
                           {"max_in_flight", "8"},         {"room_min_interval", "\"0ms\""}};
  return options;
}

// Milliseconds from `from` to `to`.
int64_t MsBetween(SteadyClock::time_point from, SteadyClock::time_point to) {
  return std::chrono::duration_cast<milliseconds>(to - from).count();
}

class LeaseTakeoverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(db_.valid());
    ASSERT_TRUE(im_.running()) << im_.start_error();
  }

  std::unique_ptr<RelayProcess> Start(const std::string& node_id) {
    auto relay = std::make_unique<RelayProcess>(db_, im_, DaemonOptions(node_id));
    EXPECT_TRUE(relay->Start());
    return relay;
  }

  // `per_room` pending rows in each of `rooms` rooms, due now; room_seq 1.. in id order.
  void Insert(int rooms, int per_room) {
    for (int seq = 1; seq <= per_room; ++seq) {
      for (int r = 0; r < rooms; ++r) {
        const std::string room = "room-" + std::to_string(r);
        const std::string event_id = room + "-" + std::to_string(seq);
        db_.Exec(
            "INSERT INTO room_outbox (event_id, event_type, room_id, command_id, request_id, "
            "envelope, status, retry_count, next_attempt_at_ms, created_at_ms, updated_at_ms) "
            "VALUES (" +
            SqlQuote(event_id) + ", 'RoomGiftSent', " + SqlQuote(room) + ", " +
            SqlQuote("cmd-" + event_id) + ", '', " +
            SqlQuote(TestEnvelope(event_id, room, seq, "room-service-test")) + ", 'pending', 0, 0, " +
            kServerNowSql + ", " + kServerNowSql + ")");
      }
    }
  }
  int64_t Count(const std::string& where) {
    return db_.Scalar("SELECT COUNT(*) FROM room_outbox WHERE " + where);
  }
  // The token prefix of the run of `node_id` as room_outbox_relay_run records it ("" when none).
  std::string RunOf(const std::string& node_id) {
    auto rows = db_.Query("SELECT token_prefix FROM room_outbox_relay_run WHERE node_id = " +
                          SqlQuote(node_id));
    return rows.size() == 1 ? rows[0][0].value_or("") : "";
  }
  // The rows `token_prefix`'s run holds with at least `ms` of its lease left.
  std::string LeasedBy(const std::string& token_prefix, int64_t ms) {
    return "status = 'pending' AND claim_token LIKE " + SqlQuote(token_prefix + "%") +
           " AND next_attempt_at_ms > " + std::string(kServerNowSql) + " + " + std::to_string(ms);
  }

  // Every row delivered at least once, and in each room the first deliveries in room_seq order.
  void ExpectEveryRowOnceInRoomOrder(int rooms, int per_room) {
    EXPECT_EQ(im_.Stats().unique_event_ids, static_cast<size_t>(rooms * per_room));
    const auto by_room = DeliveredByRoom(im_);
    EXPECT_EQ(by_room.size(), static_cast<size_t>(rooms));
    for (const auto& [room, delivered] : by_room) {
      std::set<int64_t> seen;
      int64_t last_new = 0;
      for (const FakeImRequest& r : delivered) {
        if (!seen.insert(r.room_seq).second) continue;  // sent again after the kill
        ASSERT_EQ(r.room_seq, last_new + 1) << room << " delivered out of order";
        last_new = r.room_seq;
      }
      EXPECT_EQ(last_new, per_room) << room;
    }
  }

  TestDatabase db_;
  FakeImServer im_;
};

// The measurement: relay A (node a) drains 100 rooms against a slow IM and is killed; B
// (node b) starts at once. Printed: B's first delivery and the slowest room's first delivery
// after B's start (before this, 30.0 s and 30.4 s: B waited A's 30 s leases out).
TEST_F(LeaseTakeoverTest, ARelayOfAnotherNodeIdTakesBackAKilledRelaysLeasesWithinSeconds) {
  constexpr int kRooms = 100;
  constexpr int kPerRoom = 5;
  Insert(kRooms, kPerRoom);
  im_.SetDefaultFault(FakeImFault::Ok().After(milliseconds(2000)));
  auto a = Start("takeover-a");
  ASSERT_TRUE(im_.WaitForRequests(4, seconds(30))) << a->StderrTail();
  const std::string a_run = RunOf("takeover-a");
  ASSERT_FALSE(a_run.empty()) << "relay a left no row in room_outbox_relay_run";
  ASSERT_TRUE(a->Kill());
  const int64_t leased = Count(LeasedBy(a_run, kLeaseMs / 2));
  ASSERT_GT(leased, 0) << "the killed relay left no lease to take back";
  const int64_t rooms_leased = db_.Scalar("SELECT COUNT(DISTINCT room_id) FROM room_outbox WHERE " +
                                          LeasedBy(a_run, 0));

  im_.SetDefaultFault(FakeImFault::Ok());
  const auto b_started = SteadyClock::now();
  auto b = Start("takeover-b");
  const int64_t total = kRooms * kPerRoom;
  ASSERT_TRUE(Eventually([&] { return Count("status = 'published'") == total; },
                         milliseconds(kLeaseMs / 2)))
      << Count("status = 'published'") << " of " << total
      << " published within half the lease\n"
      << b->StderrTail();
  const auto all_delivered = SteadyClock::now();

  // B's first delivery, and each room's first delivery after B's start.
  std::map<std::string, SteadyClock::time_point> first_after;
  for (const FakeImRequest& request : im_.Requests()) {
    if (request.arrived < b_started) continue;
    auto [it, inserted] = first_after.emplace(request.room_id, request.arrived);
    if (!inserted) it->second = std::min(it->second, request.arrived);
  }
  ASSERT_FALSE(first_after.empty());
  int64_t first_ms = kLeaseMs;
  int64_t slowest_ms = 0;
  for (const auto& [room, at] : first_after) {
    first_ms = std::min(first_ms, MsBetween(b_started, at));
    slowest_ms = std::max(slowest_ms, MsBetween(b_started, at));
  }
  std::printf(
      "lease takeover: relay a (node_id takeover-a) killed with %lld rows of %lld rooms leased "
      "for 60 s; relay b (node_id takeover-b) started at once: first delivery %.1f s, slowest "
      "room's first delivery %.1f s, all %lld rows in %.1f s after b's start\n",
      static_cast<long long>(leased), static_cast<long long>(rooms_leased), first_ms / 1000.0,
      slowest_ms / 1000.0, static_cast<long long>(total),
      MsBetween(b_started, all_delivered) / 1000.0);
  EXPECT_LT(slowest_ms, kLeaseMs / 2) << "a room waited for the dead relay's lease";
  EXPECT_EQ(first_after.size(), static_cast<size_t>(kRooms));
  ExpectEveryRowOnceInRoomOrder(kRooms, kPerRoom);
  EXPECT_EQ(b->CountLogLines({"leases of a relay gone given back", "gone_node_id",
                              "takeover-a", "released=" + std::to_string(leased)}),
            1u)
      << b->StderrTail();
  EXPECT_EQ(RunOf("takeover-a"), "") << "the gone run's row stays";
  auto exit = b->Stop(seconds(20));
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->exit_code, 0) << Describe(*exit) << "\n" << b->StderrTail();
  EXPECT_EQ(RunOf("takeover-b"), "") << "a relay that stopped keeps its row";
}

// A runs and holds leases (IM answers it slowly); B runs beside it, past the time it may give
// leases back, and takes none of A's. Then A is killed: B, already running, takes A's leases
// back within seconds, not the 60 s lease.
TEST_F(LeaseTakeoverTest, ALiveRelaysLeasesAreLeftAloneAndTakenWithinSecondsOnceItIsKilled) {
  constexpr int kRooms = 40;
  Insert(kRooms, 1);
  im_.SetDefaultFault(FakeImFault::Ok().After(milliseconds(3000)));
  auto a = Start("live-a");
  ASSERT_TRUE(im_.WaitForRequests(2, seconds(30))) << a->StderrTail();
  const std::string a_run = RunOf("live-a");
  ASSERT_FALSE(a_run.empty());
  auto b = Start("live-b");
  // B has held its lock for longer than kRelayGoneAfter (2 s) and beaten since, on the server's
  // clock: past its first passes that may give leases back.
  ASSERT_TRUE(Eventually(
      [&] {
        return db_.Scalar("SELECT COALESCE(MAX(beat_ms - started_at_ms), 0) FROM "
                          "room_outbox_relay_run WHERE node_id = 'live-b'") >= 4000;
      },
      seconds(30)))
      << b->StderrTail();
  ASSERT_TRUE(a->Alive());
  const int64_t still_leased = Count(LeasedBy(a_run, 0));
  EXPECT_GT(still_leased, 0) << "relay a finished before relay b looked";
  EXPECT_EQ(Count("status = 'pending' AND (claim_token IS NULL OR claim_token NOT LIKE " +
                  SqlQuote(a_run + "%") + ")"),
            0)
      << "a pending row not held by the live relay a";
  EXPECT_EQ(b->CountLogLines({"leases of a relay gone given back"}), 0u) << b->StderrTail();
  EXPECT_EQ(im_.Stats().duplicates, 0u);

  ASSERT_TRUE(a->Kill());
  const int64_t left = Count(LeasedBy(a_run, 0));
  im_.SetDefaultFault(FakeImFault::Ok());
  const auto killed = SteadyClock::now();
  ASSERT_TRUE(Eventually([&] { return Count("status = 'published'") == kRooms; },
                         milliseconds(kLeaseMs / 2)))
      << Count("status = 'published'") << " of " << kRooms << "\n"
      << b->StderrTail();
  std::printf("lease takeover: relay live-a killed with %lld rows leased; relay live-b, running "
              "beside it, delivered them all %.1f s later\n",
              static_cast<long long>(left), MsBetween(killed, SteadyClock::now()) / 1000.0);
  ExpectEveryRowOnceInRoomOrder(kRooms, 1);
  EXPECT_EQ(b->CountLogLines({"leases of a relay gone given back", "live-a"}), 1u)
      << b->StderrTail();
}

// A live relay whose lock connection is cut (a KILL, a proxy) loses its node lock for a moment:
// it takes the lock again within a beat and its beat, on a connection of its own, stays fresh,
// so a relay beside it that holds its own lock takes none of its leases.
TEST_F(LeaseTakeoverTest, ALiveRelayWhoseLockConnectionIsCutKeepsItsLeases) {
  constexpr int kRooms = 40;
  Insert(kRooms, 1);
  im_.SetDefaultFault(FakeImFault::Ok().After(milliseconds(3000)));
  auto a = Start("cut-a");
  ASSERT_TRUE(im_.WaitForRequests(2, seconds(30))) << a->StderrTail();
  const std::string a_run = RunOf("cut-a");
  ASSERT_FALSE(a_run.empty());
  auto b = Start("cut-b");
  const std::string b_held = "SELECT COALESCE(MAX(beat_ms - started_at_ms), 0) FROM "
                             "room_outbox_relay_run WHERE node_id = 'cut-b'";
  ASSERT_TRUE(Eventually([&] { return db_.Scalar(b_held) >= 3000; }, seconds(30)))
      << b->StderrTail();
  const std::string lock = SqlQuote(relay::NodeLockName(db_.name(), "cut-a"));
  const int64_t holder = db_.Scalar("SELECT IS_USED_LOCK(" + lock + ")");
  ASSERT_GT(holder, 0);
  db_.Exec("KILL " + std::to_string(holder));
  // Taken again, on a new connection, and then past the time a relay gone would be given back.
  ASSERT_TRUE(Eventually(
      [&] {
        const int64_t now = db_.Scalar("SELECT COALESCE(IS_USED_LOCK(" + lock + "), 0)");
        return now > 0 && now != holder;
      },
      seconds(30)))
      << a->StderrTail();
  const int64_t cut_at = db_.Scalar("SELECT " + std::string(kServerNowSql));
  ASSERT_TRUE(Eventually(
      [&] {
        return db_.Scalar("SELECT COALESCE(MAX(beat_ms), 0) FROM room_outbox_relay_run WHERE "
                          "node_id = 'cut-b'") >= cut_at + 3000;
      },
      seconds(30)))
      << b->StderrTail();
  ASSERT_TRUE(a->Alive());
  EXPECT_EQ(a->CountLogLines({"node lock taken after start"}), 1u) << a->StderrTail();
  EXPECT_EQ(b->CountLogLines({"leases of a relay gone given back"}), 0u) << b->StderrTail();
  EXPECT_EQ(Count("status = 'pending' AND (claim_token IS NULL OR claim_token NOT LIKE " +
                  SqlQuote(a_run + "%") + ")"),
            0)
      << "a pending row not held by the live relay cut-a";
  EXPECT_EQ(im_.Stats().duplicates, 0u);
}

// The give-back walks idx_claim_token over the gone run's prefix: the rows read follow the rows
// given back, not the pending backlog nor the other runs' leases, and nothing else changes.
TEST(ReleaseRunLeasesTest, TheGiveBackReadsOnlyTheGoneRunsRows) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  // 20,000 rows: half pending and due; 40 pending rows leased far ahead (retry_count 3 and a
  // last_error each): 14 by the gone run, 6 by a live one, 20 by a sync attempt.
  db.Exec(
      "INSERT INTO room_outbox (event_id, event_type, room_id, command_id, envelope, status, "
      "retry_count, last_error, next_attempt_at_ms, claim_token, created_at_ms, updated_at_ms) "
      "SELECT CONCAT('e', seq), 'T', CONCAT('room-', seq % 97), CONCAT('c', seq), '{}', "
      "IF(seq % 2 = 0, 'pending', 'published'), IF(seq % 500 = 0, 3, 0), "
      "IF(seq % 500 = 0, 'IM 10002', NULL), IF(seq % 500 = 0, 9000000000000, seq), "
      "CASE WHEN seq % 1500 = 0 THEN CONCAT('relay-0123456789abcdef-11111111-', seq) "
      "WHEN seq % 1000 = 0 THEN CONCAT('relay-0123456789abcdef-00000000-', seq) "
      "WHEN seq % 500 = 0 THEN MD5(seq) END, seq, seq "
      "FROM seq_1_to_20000");
  db.Exec("ANALYZE TABLE room_outbox");
  const int64_t gone = db.Scalar(
      "SELECT COUNT(*) FROM room_outbox WHERE claim_token LIKE 'relay-0123456789abcdef-00000000-%'");
  ASSERT_GT(gone, 0);
  const std::vector<std::string> pattern = {"'relay-0123456789abcdef-00000000-%'"};
  auto rows = db.Query("EXPLAIN " + WithLiterals(core::sql::kReleaseRunLeases, pattern));
  ASSERT_FALSE(rows.empty());
  // EXPLAIN columns: id, select_type, table, type, possible_keys, key, key_len, ref, rows, Extra.
  EXPECT_EQ(rows[0][5].value_or(""), "idx_claim_token");
  EXPECT_EQ(rows[0][3].value_or(""), "range");
  const int64_t others_before = db.Scalar(
      "SELECT COUNT(*) FROM room_outbox WHERE claim_token IS NOT NULL AND claim_token NOT LIKE "
      "'relay-0123456789abcdef-00000000-%'");

  db.Exec("FLUSH STATUS");
  db.Exec(WithLiterals(core::sql::kReleaseRunLeases, pattern));
  int64_t rows_read = 0;
  for (const auto& row : db.Query(std::string(core::sql::kSessionRowsRead))) {
    rows_read += std::stoll(row[1].value_or("0"));
  }
  // An UPDATE that changes the key of the index it ranges over reads each row twice (the range,
  // then each row again to change it), plus the range's first and last dives.
  EXPECT_LE(rows_read, 2 * gone + 2) << "the give-back read more than the gone run's rows";
  EXPECT_EQ(db.Scalar("SELECT COUNT(*) FROM room_outbox WHERE claim_token LIKE "
                      "'relay-0123456789abcdef-00000000-%'"),
            0);
  // Due now, retry_count and last_error kept; every other lease kept.
  EXPECT_EQ(db.Scalar("SELECT COUNT(*) FROM room_outbox WHERE status = 'pending' AND "
                      "claim_token IS NULL AND retry_count = 3 AND last_error = 'IM 10002' AND "
                      "next_attempt_at_ms <= " +
                      std::string(kServerNowSql)),
            gone);
  EXPECT_EQ(db.Scalar("SELECT COUNT(*) FROM room_outbox WHERE claim_token IS NOT NULL"),
            others_before);
}

}  // namespace
}  // namespace room_outbox::testing
