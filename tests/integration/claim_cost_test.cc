// The claim's cost follows the rooms it serves, not one room's backlog: a room with 20k pending
// rows behind a failing head, or a hot room with 10k due rows (the rooms backlogged:
// RoomScheduleTest.AClaimReadsAsManyRowsWhateverTheRoomsBacklogged). Measured as the rows the
// server's handlers read for one ClaimDue on the store's own connection (Handler_read_* session
// counters), which do not depend on the machine's speed.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "store/mariadb_relay_store.h"
#include "support/test_database.h"

namespace room_outbox::testing {
namespace {

constexpr int kBlockedRows = 20'000;
constexpr int kHotRows = 10'000;
constexpr size_t kBatch = 100;

relay::ClaimOptions Batch() {
  relay::ClaimOptions options;
  options.limit = kBatch;
  options.lease_ms = 30'000;
  options.rooms.per_room_order = true;
  return options;
}

// 10 quiet rooms of 10 rows each, due after the blocked room's rows (the worst case for a walk in
// due order), ids after them.
void AddQuietRooms(TestDatabase& db) {
  db.Exec(
      "INSERT INTO room_outbox (event_id, event_type, room_id, command_id, envelope, status, "
      "next_attempt_at_ms, created_at_ms, updated_at_ms) "
      "SELECT CONCAT('q', seq), 'RoomGiftSent', CONCAT('quiet-', seq % 10), CONCAT('qc', seq), "
      "'{}', 'pending', 1000000 + seq, seq, seq FROM seq_1_to_100");
}

// The blocked room: its head failed and waits an hour for its retry; its other rows are due.
void AddBlockedRoom(TestDatabase& db) {
  db.Exec(
      "INSERT INTO room_outbox (event_id, event_type, room_id, command_id, envelope, status, "
      "retry_count, next_attempt_at_ms, created_at_ms, updated_at_ms) VALUES ('b0', "
      "'RoomGiftSent', 'blocked', 'bc0', '{}', 'pending', 1, "
      "CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED) + 3600000, 0, 0)");
  db.Exec(
      "INSERT INTO room_outbox (event_id, event_type, room_id, command_id, envelope, status, "
      "next_attempt_at_ms, created_at_ms, updated_at_ms) "
      "SELECT CONCAT('b', seq), 'RoomGiftSent', 'blocked', CONCAT('bc', seq), '{}', 'pending', "
      "seq, seq, seq FROM seq_1_to_" +
      std::to_string(kBlockedRows));
  db.Exec("ANALYZE TABLE room_outbox");
}

// Every pending row listed and every room with pending rows on the room schedule, due when its
// head is: the state a running relay keeps (its claims list rows as they arrive), which the rows
// inserted above skip.
void ListDirectly(TestDatabase& db) {
  db.Exec("UPDATE room_outbox SET room_listed = 1 WHERE status = 'pending'");
  db.Exec(
      "INSERT INTO room_outbox_room (room_id, due_at_ms, updated_at_ms) SELECT o.room_id, "
      "o.next_attempt_at_ms, 0 "
      "FROM room_outbox o JOIN (SELECT MIN(id) AS id FROM room_outbox WHERE status = 'pending' "
      "GROUP BY room_id) h ON o.id = h.id");
  db.Exec("ANALYZE TABLE room_outbox, room_outbox_room");
}

struct ClaimCost {
  int64_t rows_read = 0;
  size_t claimed = 0;
  size_t quiet_claimed = 0;
};

// One claim (its rows given back at once, so the next claim sees the same backlog) and the rows
// the server read for it, less what the counter query itself reads.
ClaimCost CostOfOneClaim(relay::MariaDbRelayStore& store) {
  ClaimCost cost;
  auto r0 = store.RowsRead();
  auto r1 = store.RowsRead();
  auto claim = store.ClaimDue(Batch());
  auto r2 = store.RowsRead();
  EXPECT_TRUE(r0 && r1 && r2 && claim);
  if (!r0 || !r1 || !r2 || !claim) return cost;
  const int64_t counter_cost = *r1 - *r0;
  cost.rows_read = *r2 - *r1 - counter_cost;
  cost.claimed = claim->rows.size();
  for (const relay::OutboxRow& row : claim->rows) {
    if (row.room_id != "blocked") ++cost.quiet_claimed;
  }
  if (!claim->rows.empty()) {
    std::vector<int64_t> ids;
    for (const relay::OutboxRow& row : claim->rows) ids.push_back(row.id);
    EXPECT_TRUE(store.Release(claim->token, ids));
  }
  return cost;
}

// Three claims in a row (each one's rows given back, so the next lists them again and sees the
// same backlog): the most rows one of them read, and what the last one claimed.
ClaimCost WorstOfThreeClaims(relay::MariaDbRelayStore& store) {
  ClaimCost worst;
  for (int k = 0; k < 3; ++k) {
    const ClaimCost cost = CostOfOneClaim(store);
    worst = ClaimCost{std::max(worst.rows_read, cost.rows_read), cost.claimed, cost.quiet_claimed};
  }
  return worst;
}

// 100 quiet rooms of one row each, due after the hot room's rows.
void AddHundredQuietRooms(TestDatabase& db) {
  db.Exec(
      "INSERT INTO room_outbox (event_id, event_type, room_id, command_id, envelope, status, "
      "next_attempt_at_ms, created_at_ms, updated_at_ms) "
      "SELECT CONCAT('q', seq), 'RoomGiftSent', CONCAT('quiet-', seq), CONCAT('qc', seq), "
      "'{}', 'pending', 1000000 + seq, seq, seq FROM seq_1_to_100");
}

// The hot room: kHotRows due rows, committed before every quiet room's row.
void AddHotRoom(TestDatabase& db) {
  db.Exec(
      "INSERT INTO room_outbox (event_id, event_type, room_id, command_id, envelope, status, "
      "next_attempt_at_ms, created_at_ms, updated_at_ms) "
      "SELECT CONCAT('h', seq), 'RoomGiftSent', 'hot', CONCAT('hc', seq), '{}', 'pending', "
      "seq, seq, seq FROM seq_1_to_" +
      std::to_string(kHotRows));
  db.Exec("ANALYZE TABLE room_outbox");
}

TEST(ClaimCostTest, ABlockedRoomsBacklogDoesNotMakeClaimsReadMore) {
  TestDatabase without;
  ASSERT_TRUE(without.valid());
  AddQuietRooms(without);
  ListDirectly(without);
  auto plain_store = relay::MakeMariaDbRelayStore(without.Options());
  const ClaimCost plain = WorstOfThreeClaims(*plain_store);
  EXPECT_EQ(plain.quiet_claimed, 100u);

  TestDatabase with;
  ASSERT_TRUE(with.valid());
  AddBlockedRoom(with);
  AddQuietRooms(with);
  ListDirectly(with);
  auto store = relay::MakeMariaDbRelayStore(with.Options());
  // The claim starts from the rooms due: the blocked room's head waits, so none of its rows is
  // read, from the first claim on (and on later executions of the same prepared statements).
  int64_t worst = 0;
  for (int k = 0; k < 3; ++k) {
    const ClaimCost cost = CostOfOneClaim(*store);
    EXPECT_EQ(cost.quiet_claimed, 100u) << "claim " << k;
    EXPECT_EQ(cost.claimed, 100u) << "claim " << k;
    worst = std::max(worst, cost.rows_read);
  }
  std::printf(
      "rows read per claim: without the blocked room %lld; with %d rows behind a failing head: "
      "worst %lld of 3 claims\n",
      static_cast<long long>(plain.rows_read), kBlockedRows, static_cast<long long>(worst));
  // The rooms due, their first rows, the listing of the rows given back and the writes: the
  // blocked room, not due, adds nothing.
  EXPECT_LE(worst, plain.rows_read * 6 / 5 + 10);
}

// A hot room's backlog beside 100 quiet rooms: one claim reaches every quiet room (and the hot
// room's head), and reads about what the 100 rooms alone cost.
TEST(ClaimCostTest, AHotRoomsBacklogDoesNotDelayOrCostTheQuietRooms) {
  TestDatabase alone;
  ASSERT_TRUE(alone.valid());
  AddHundredQuietRooms(alone);
  ListDirectly(alone);
  auto alone_store = relay::MakeMariaDbRelayStore(alone.Options());
  const ClaimCost plain = WorstOfThreeClaims(*alone_store);
  EXPECT_EQ(plain.quiet_claimed, 100u);

  TestDatabase with;
  ASSERT_TRUE(with.valid());
  AddHotRoom(with);
  AddHundredQuietRooms(with);
  ListDirectly(with);
  auto store = relay::MakeMariaDbRelayStore(with.Options());
  int64_t worst = 0;
  for (int k = 0; k < 3; ++k) {
    const ClaimCost cost = CostOfOneClaim(*store);
    // 101 rooms due for a batch of 100: the oldest due first, so the hot room's head and 99
    // quiet rooms; the quiet room left out comes first in the next claim.
    EXPECT_EQ(cost.claimed, 100u) << "claim " << k;
    EXPECT_GE(cost.quiet_claimed, 99u) << "claim " << k;
    worst = std::max(worst, cost.rows_read);
  }
  std::printf(
      "rows read per claim: 100 quiet rooms alone %lld; beside a room of %d due rows %lld\n",
      static_cast<long long>(plain.rows_read), kHotRows, static_cast<long long>(worst));
  EXPECT_LE(worst, plain.rows_read * 6 / 5 + 10);
}

}  // namespace
}  // namespace room_outbox::testing
