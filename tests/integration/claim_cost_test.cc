// The claim's cost follows the batch, not a blocked room's backlog: a room with 20k pending rows
// behind a permanently failing head. Measured as the rows the server's handlers read for one
// ClaimDue on the store's own connection (Handler_read_* session counters).
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "store/mariadb_relay_store.h"
#include "support/test_database.h"

namespace room_outbox::testing {
namespace {

constexpr int kBlockedRows = 20'000;
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

TEST(ClaimCostTest, ABlockedRoomsBacklogDoesNotMakeClaimsReadMore) {
  TestDatabase without;
  ASSERT_TRUE(without.valid());
  AddQuietRooms(without);
  auto plain_store = relay::MakeMariaDbRelayStore(without.Options());
  const ClaimCost plain = CostOfOneClaim(*plain_store);
  EXPECT_EQ(plain.quiet_claimed, 100u);

  TestDatabase with;
  ASSERT_TRUE(with.valid());
  AddBlockedRoom(with);
  AddQuietRooms(with);
  auto store = relay::MakeMariaDbRelayStore(with.Options());
  // The first claims meet the blocked room's due rows: each reads one window of them and pushes
  // it to the head's retry time, no more.
  int64_t worst = 0;
  int claims = 0;
  ClaimCost cost;
  do {
    cost = CostOfOneClaim(*store);
    worst = std::max(worst, cost.rows_read);
    ++claims;
  } while (cost.quiet_claimed == 0 && claims < 2 * kBlockedRows / static_cast<int>(kBatch));
  EXPECT_EQ(cost.quiet_claimed, 100u) << "after " << claims << " claims";
  EXPECT_EQ(with.Scalar("SELECT COUNT(*) FROM room_outbox WHERE room_id = 'blocked' AND "
                        "claim_token IS NULL AND next_attempt_at_ms <= "
                        "CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED)"),
            0)
      << "every due row of the blocked room waits for its head's retry";
  // Then, until that retry, the blocked room costs a claim nothing.
  const ClaimCost steady = CostOfOneClaim(*store);
  EXPECT_EQ(steady.quiet_claimed, 100u);
  std::printf(
      "rows read per claim: without the blocked room %lld; with %d rows behind a failing head: "
      "worst %lld while pushing its rows back (%d claims), %lld after\n",
      static_cast<long long>(plain.rows_read), kBlockedRows, static_cast<long long>(worst), claims,
      static_cast<long long>(steady.rows_read));
  // A window, the rooms' first rows and the writes: a small multiple of the batch, whatever the
  // blocked room holds (the walk of the old claim read all 20k of its rows, every claim).
  EXPECT_LT(worst, static_cast<int64_t>(20 * kBatch));
  EXPECT_LE(steady.rows_read, plain.rows_read * 3 / 2 + 50);
}

}  // namespace
}  // namespace room_outbox::testing
