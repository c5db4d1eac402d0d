// The room schedule (schema 009) as the relay's store keeps it: rows that arrive are listed once
// and make their room due; a claim takes due rooms and writes each one's next due time; marks bring
// a room back; a room without pending rows leaves the schedule; rows a relay gives back are listed
// again; a head another relay or the hook holds is looked at again soon; and a claim's cost follows
// the rooms it serves, not the rooms backlogged.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "core/mysql/outbox_sql.h"
#include "store/claim_plan.h"
#include "store/mariadb_relay_store.h"
#include "support/test_database.h"

namespace room_outbox::testing {
namespace {

constexpr char kNowMs[] = "CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED)";

// `events` pending due rows in each of `rooms` rooms "r<n>", every room's first event first (ids in
// that order), unlisted, as a writer by the SQL contract leaves them.
void AddBacklog(TestDatabase& db, int rooms, int events) {
  for (int k = 0; k < events; ++k) {
    db.Exec(
        "INSERT INTO room_outbox (event_id, event_type, room_id, command_id, envelope, status, "
        "next_attempt_at_ms, created_at_ms, updated_at_ms) "
        "SELECT CONCAT('e', seq, '-" +
        std::to_string(k) + "'), 'RoomGiftSent', CONCAT('r', seq), CONCAT('c', seq, '-" +
        std::to_string(k) + "'), '{}', 'pending', 0, seq, seq FROM seq_1_to_" +
        std::to_string(rooms));
  }
}

relay::ClaimOptions Batch(size_t messages, size_t pack = 1) {
  relay::ClaimOptions options;
  options.limit = messages;
  options.lease_ms = 30'000;
  options.rooms.pack_events = pack;
  return options;
}

std::vector<int64_t> Ids(const relay::Claim& claim) {
  std::vector<int64_t> ids;
  for (const relay::OutboxRow& row : claim.rows) ids.push_back(row.id);
  return ids;
}

// The room's due time less the server's now (ms), or nullopt when it is not on the schedule or
// idle.
std::optional<int64_t> DueIn(TestDatabase& db, const std::string& room) {
  auto rows = db.Query(std::string("SELECT due_at_ms - ") + kNowMs +
                       " FROM room_outbox_room WHERE room_id = '" + room + "' AND due_at_ms < " +
                       std::to_string(core::sql::kIdleRoomDueMs));
  if (rows.empty() || !rows[0][0]) return std::nullopt;
  return std::stoll(*rows[0][0]);
}

TEST(RoomScheduleTest, ArrivalsAreListedOnceAndTheirRoomsTakenInOneClaim) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  AddBacklog(db, 3, 2);
  relay::MariaDbRelayStore store(db.Options());
  auto claim = store.ClaimDue(Batch(10, 20));
  ASSERT_TRUE(claim) << claim.error().message;
  EXPECT_EQ(claim->rows_listed, 6u);
  EXPECT_EQ(claim->rows.size(), 6u) << "each room's two events, one message each";
  EXPECT_EQ(db.Scalar("SELECT COUNT(*) FROM room_outbox WHERE room_listed = 0"), 0);
  EXPECT_EQ(db.Scalar("SELECT COUNT(*) FROM room_outbox_room"), 3);
  for (const char* room : {"r1", "r2", "r3"}) {
    auto due = DueIn(db, room);
    ASSERT_TRUE(due) << room;
    EXPECT_GT(*due, 20'000) << room << ": leased, due when the lease ends";
  }
  auto again = store.ClaimDue(Batch(10, 20));
  ASSERT_TRUE(again);
  EXPECT_EQ(again->rows_listed, 0u);
  EXPECT_TRUE(again->rows.empty());
}

TEST(RoomScheduleTest, MarksBringTheRoomBackAndAnEmptyRoomGoesIdle) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  AddBacklog(db, 1, 2);
  relay::MariaDbRelayStore store(db.Options());
  auto first = store.ClaimDue(Batch(1));
  ASSERT_TRUE(first);
  ASSERT_EQ(first->rows.size(), 1u);
  // The head is in flight: the room is not due, so nothing else of it is taken.
  auto none = store.ClaimDue(Batch(1));
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->rows.empty());
  ASSERT_TRUE(store.MarkPublished(first->token, Ids(*first), {}));
  EXPECT_LE(*DueIn(db, "r1"), 0) << "published: the room goes on at once";
  auto second = store.ClaimDue(Batch(1));
  ASSERT_TRUE(second);
  ASSERT_EQ(second->rows.size(), 1u);
  EXPECT_GT(second->rows[0].id, first->rows[0].id);
  ASSERT_TRUE(store.MarkPublished(second->token, Ids(*second), {}));
  EXPECT_FALSE(DueIn(db, "r1")) << "its last pending row published: idle at the mark";
  auto last = store.ClaimDue(Batch(1));
  ASSERT_TRUE(last);
  EXPECT_TRUE(last->rows.empty());
  EXPECT_FALSE(DueIn(db, "r1")) << "no pending row left: idle";
  EXPECT_EQ(db.Scalar("SELECT COUNT(*) FROM room_outbox_room WHERE due_at_ms = " +
                      std::to_string(core::sql::kIdleRoomDueMs)),
            1);
}

// After a drain of many rooms, none of them is left due with nothing to send: a row that arrives
// next, in another room, is in the next claim of one room's batch, not behind the drained rooms.
TEST(RoomScheduleTest, ADrainedRoomGoesIdleSoTheNextArrivalIsNotBehindIt) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  AddBacklog(db, 300, 1);
  relay::MariaDbRelayStore store(db.Options());
  for (int k = 0; k < 3; ++k) {
    auto claim = store.ClaimDue(Batch(100));
    ASSERT_TRUE(claim) << claim.error().message;
    ASSERT_EQ(claim->rows.size(), 100u);
    ASSERT_TRUE(store.MarkPublished(claim->token, Ids(*claim), {}));
  }
  EXPECT_EQ(db.Scalar("SELECT COUNT(*) FROM room_outbox_room WHERE due_at_ms < " +
                      std::to_string(core::sql::kIdleRoomDueMs)),
            0)
      << "every drained room idle";
  db.Exec(std::string("INSERT INTO room_outbox (event_id, event_type, room_id, command_id, "
                      "envelope, status, next_attempt_at_ms, created_at_ms, updated_at_ms) VALUES "
                      "('late', 'RoomGiftSent', 'r-late', 'c-late', '{}', 'pending', ") +
          kNowMs + ", 1, 1)");
  auto next = store.ClaimDue(Batch(1));
  ASSERT_TRUE(next) << next.error().message;
  ASSERT_EQ(next->rows.size(), 1u);
  EXPECT_EQ(next->rows[0].event_id, "late");
}

TEST(RoomScheduleTest, AFailedHeadsRoomComesDueAtItsRetryAndNotBefore) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  AddBacklog(db, 1, 3);
  relay::MariaDbRelayStore store(db.Options());
  auto claim = store.ClaimDue(Batch(1));
  ASSERT_TRUE(claim);
  ASSERT_EQ(claim->rows.size(), 1u);
  ASSERT_TRUE(store.MarkFailed(
      claim->token, std::vector<relay::FailedAttempt>{{claim->rows[0].id, "x", 60'000}}));
  auto due = DueIn(db, "r1");
  ASSERT_TRUE(due);
  EXPECT_GT(*due, 50'000);
  EXPECT_LE(*due, 60'000);
  auto behind = store.ClaimDue(Batch(5));
  ASSERT_TRUE(behind);
  EXPECT_TRUE(behind->rows.empty()) << "the rows behind the failed head wait for it";
}

TEST(RoomScheduleTest, RowsTheRelayGivesBackAreListedAgainAndTakenAtOnce) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  AddBacklog(db, 2, 1);
  relay::MariaDbRelayStore store(db.Options());
  auto claim = store.ClaimDue(Batch(10));
  ASSERT_TRUE(claim);
  ASSERT_EQ(claim->rows.size(), 2u);
  auto released = store.Release(claim->token, Ids(*claim));
  ASSERT_TRUE(released);
  EXPECT_EQ(*released, 2u);
  EXPECT_EQ(db.Scalar("SELECT COUNT(*) FROM room_outbox WHERE room_listed = 0"), 2);
  auto again = store.ClaimDue(Batch(10));
  ASSERT_TRUE(again);
  EXPECT_EQ(again->rows_listed, 2u);
  EXPECT_EQ(Ids(*again), Ids(*claim));
}

TEST(RoomScheduleTest, AHeadHeldByAnotherRelayOrTheHookIsLookedAtAgainSoon) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  AddBacklog(db, 2, 2);
  // r1's head is in flight under another relay's lease, r2's under the hook's sync publish, each
  // for a minute; their second rows are due.
  db.Exec(std::string("UPDATE room_outbox SET next_attempt_at_ms = ") + kNowMs +
          " + 60000, claim_token = CASE room_id WHEN 'r1' THEN "
          "'relay-0123456789abcdef-01234567-0123456789abcdef01234567' ELSE "
          "'0123456789abcdef0123456789abcdef' END WHERE event_id LIKE '%-0'");
  relay::MariaDbRelayStore store(db.Options());
  auto claim = store.ClaimDue(Batch(10));
  ASSERT_TRUE(claim);
  EXPECT_TRUE(claim->rows.empty()) << "nothing overtakes a head in flight";
  EXPECT_EQ(claim->rows_listed, 2u) << "the heads in flight are left for their holders";
  auto relay_held = DueIn(db, "r1");
  auto hook_held = DueIn(db, "r2");
  ASSERT_TRUE(relay_held && hook_held);
  EXPECT_LE(*relay_held, relay::kRelayHeadRecheckMs);
  EXPECT_LE(*hook_held, relay::kHookHeadRecheckMs);
  EXPECT_GT(*relay_held, 0);
}

TEST(RoomScheduleTest, TwoStoresTakeDifferentRoomsAtOnce) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  AddBacklog(db, 40, 1);
  relay::MariaDbRelayStore a(db.Options());
  relay::MariaDbRelayStore b(db.Options());
  auto listed = a.ClaimDue(Batch(20));
  ASSERT_TRUE(listed);
  ASSERT_EQ(listed->rows.size(), 20u);
  auto other = b.ClaimDue(Batch(20));
  ASSERT_TRUE(other);
  ASSERT_EQ(other->rows.size(), 20u) << "the rooms a leased are not due: b takes the other 20";
  std::vector<int64_t> all = Ids(*listed);
  for (int64_t id : Ids(*other)) {
    EXPECT_EQ(std::count(all.begin(), all.end(), id), 0) << id;
  }
}

// A room's head row in a backlog of `rooms` rooms x 3 events, every row listed: the rows the
// server reads for one claim of 100 messages (Handler_read_*), its rows given back after.
int64_t RowsReadPerClaim(int rooms) {
  TestDatabase db;
  EXPECT_TRUE(db.valid());
  AddBacklog(db, rooms, 3);
  db.Exec("UPDATE room_outbox SET room_listed = 1");
  db.Exec(
      "INSERT INTO room_outbox_room (room_id, due_at_ms, updated_at_ms) SELECT CONCAT('r', seq), "
      "seq, 0 "
      "FROM seq_1_to_" +
      std::to_string(rooms));
  db.Exec("ANALYZE TABLE room_outbox, room_outbox_room");
  relay::MariaDbRelayStore store(db.Options());
  int64_t worst = 0;
  for (int k = 0; k < 3; ++k) {
    auto r0 = store.RowsRead();
    auto r1 = store.RowsRead();
    auto claim = store.ClaimDue(Batch(100, 20));
    auto r2 = store.RowsRead();
    EXPECT_TRUE(r0 && r1 && r2 && claim);
    if (!r0 || !r1 || !r2 || !claim) return 0;
    EXPECT_EQ(claim->rows.size(), 300u) << "100 rooms, each room's 3 events in one message";
    worst = std::max(worst, *r2 - *r1 - (*r1 - *r0));
    EXPECT_TRUE(store.Release(claim->token, Ids(*claim)));
    db.Exec("UPDATE room_outbox SET room_listed = 1");
    db.Exec("UPDATE room_outbox_room SET due_at_ms = 0");
  }
  return worst;
}

TEST(RoomScheduleTest, AClaimReadsAsManyRowsWhateverTheRoomsBacklogged) {
  const int64_t few = RowsReadPerClaim(1'000);
  const int64_t many = RowsReadPerClaim(30'000);
  std::printf("rows read per claim of 100 rooms: 1,000 rooms backlogged %lld; 30,000: %lld\n",
              static_cast<long long>(few), static_cast<long long>(many));
  EXPECT_GT(few, 0);
  EXPECT_LE(many, few * 6 / 5 + 10);
}

}  // namespace
}  // namespace room_outbox::testing
