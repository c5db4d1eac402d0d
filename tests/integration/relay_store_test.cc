// MariaDbRelayStore against the test MariaDB: claiming, leases, per-room order,
// marking with claim tokens, stats, connection handling and the claim query plan.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/mysql/outbox_sql.h"
#include "store/mariadb_relay_store.h"
#include "support/mysql_admin.h"
#include "support/test_database.h"
#include "support/test_stores.h"

namespace room_outbox::testing {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kT0 = 1'700'000'000'000;  // created_at_ms of the test rows
// A due time long past: the row is due whatever the server's clock says.
constexpr int64_t kDue = 0;

// The store's only clock is the server's. A test makes rows due or not by writing
// next_attempt_at_ms relative to it, and lets time pass by moving the stored times earlier.
int64_t ServerNowMs(TestDatabase& db) {
  return db.Scalar("SELECT CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED)");
}

// `ms` pass for every row and room: each stored due time (leases, retries, slots, the room
// schedule's) moves `ms` earlier.
void Advance(TestDatabase& db, int64_t ms) {
  db.Exec("UPDATE room_outbox SET next_attempt_at_ms = next_attempt_at_ms - " + std::to_string(ms));
  db.Exec("UPDATE room_outbox_room SET due_at_ms = due_at_ms - " + std::to_string(ms));
}

int64_t DueAt(TestDatabase& db, int64_t id) {
  return db.Scalar("SELECT next_attempt_at_ms FROM room_outbox WHERE id = " + std::to_string(id));
}

// Commits one command with one event per entry of `rooms`, due at `due_ms` (server time) and
// unclaimed; returns their ids in the order of `rooms`.
std::vector<int64_t> AddEvents(TestStores& store, const std::string& command_id,
                               const std::vector<std::string>& rooms, int64_t due_ms = kDue,
                               const std::string& envelope = "{}") {
  internal::CommitRequest request;
  request.command.command_id = command_id;
  request.command.room_id = rooms.empty() ? "r" : rooms.front();
  request.command.command_type = "T";
  for (size_t i = 0; i < rooms.size(); ++i) {
    internal::NewOutboxRow row;
    row.event_id = command_id + "-" + std::to_string(i);
    row.event_type = "RoomGiftSent";
    row.room_id = rooms[i];
    row.command_id = command_id;
    row.envelope = envelope;
    request.rows.push_back(row);
  }
  auto write = store.hook.CommitCommand(request, {});
  EXPECT_TRUE(write) << write.error().message;
  // The commit writes the server's clock; put the rows on the test's times (same transaction
  // shape as a caller's statement, so nothing else sees them in between).
  internal::CommitRequest fixture;
  fixture.command.command_id = command_id + "-fixture-times";
  fixture.command.room_id = request.command.room_id;
  fixture.command.command_type = "T";
  auto timed = store.hook.CommitCommand(fixture, [&](Transaction& tx) {
    return tx.Execute(
        "UPDATE room_outbox SET created_at_ms = ?, updated_at_ms = ?, next_attempt_at_ms = ? "
        "WHERE command_id = ?",
        {kT0, kT0, due_ms, command_id});
  });
  EXPECT_TRUE(timed) << timed.error().message;
  // Rows written unleased: the MySQL set reads no ids back, so they are looked up (in id order,
  // the order of `rooms`).
  auto found = store.hook.FindCommand(command_id);
  EXPECT_TRUE(found && *found) << command_id;
  return found && *found ? (*found)->row_ids : std::vector<int64_t>{};
}

int64_t AddEvent(TestStores& store, const std::string& id, const std::string& room,
                 int64_t due_ms = kDue) {
  auto ids = AddEvents(store, id, {room}, due_ms);
  return ids.empty() ? 0 : ids[0];
}

std::vector<int64_t> Ids(const relay::Claim& claim) {
  std::vector<int64_t> ids;
  for (const auto& row : claim.rows) {
    ids.push_back(row.id);
  }
  return ids;
}

relay::ClaimOptions Batch(size_t limit = 100, bool per_room_order = true) {
  relay::ClaimOptions options;
  options.limit = limit;
  options.lease_ms = 30'000;
  options.rooms.per_room_order = per_room_order;
  return options;
}

// Claims the due rows and records a failed attempt of `id` (error `error`), due again at once.
void ClaimAndFail(TestStores& store, int64_t id, const std::string& error) {
  auto claim = store.relay.ClaimDue(Batch());
  ASSERT_TRUE(claim);
  ASSERT_TRUE(
      store.relay.MarkFailed(claim->token, std::vector<relay::FailedAttempt>{{id, error, 0}}));
}

// Claims one row, which must be the room head `id`, and records a failed attempt of it, due
// again `retry_after_ms` later.
void ClaimHeadAndFail(TestStores& store, int64_t id, int64_t retry_after_ms) {
  auto head = store.relay.ClaimDue(Batch(1));
  ASSERT_TRUE(head);
  ASSERT_EQ(Ids(*head), std::vector<int64_t>{id});
  ASSERT_TRUE(store.relay.MarkFailed(head->token,
                                     std::vector<relay::FailedAttempt>{{id, "x", retry_after_ms}}));
}

TEST(MariaDbRelayStoreTest, FactoryDoesNotConnectAndCallsFailUnavailableWithoutServer) {
  MysqlOptions options;
  options.socket = "/nonexistent/room-outbox-test.sock";
  options.password = "s3cret-pw";
  auto store = MakeTestStores(options);
  EXPECT_FALSE(store->relay.connected());
  auto stats = store->relay.Stats();
  ASSERT_FALSE(stats);
  EXPECT_EQ(stats.error().code, ErrorCode::kUnavailable) << stats.error().message;
  EXPECT_NE(stats.error().message.find("mysql_real_connect"), std::string::npos);
  EXPECT_EQ(stats.error().message.find("s3cret-pw"), std::string::npos);
  auto connected = store->relay.Connect();
  ASSERT_FALSE(connected);
  EXPECT_EQ(connected.error().code, ErrorCode::kUnavailable);
}

TEST(MariaDbRelayStoreTest, UnknownDatabaseIsNotFound) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  MysqlOptions options = db.Options();
  options.database = db.name() + "_missing";
  auto store = MakeTestStores(options);
  auto connected = store->relay.Connect();
  ASSERT_FALSE(connected);
  EXPECT_EQ(connected.error().code, ErrorCode::kNotFound) << connected.error().message;
}

TEST(MariaDbRelayStoreTest, KilledIdleConnectionFailsOnceThenReconnects) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  auto store = MakeTestStores(db.Options());
  ASSERT_TRUE(store->relay.Connect());
  db.Exec("KILL " + std::to_string(store->relay.connection_id()));
  auto first = store->relay.Stats();
  ASSERT_FALSE(first);
  EXPECT_EQ(first.error().code, ErrorCode::kUnavailable) << first.error().message;
  EXPECT_FALSE(store->relay.connected());
  auto second = store->relay.Stats();
  ASSERT_TRUE(second) << second.error().message;
  EXPECT_TRUE(store->relay.connected());
}

TEST(MariaDbRelayStoreTest, LockWaitTimeoutIsAbortedKeepsTheConnectionAndTheNextCallWorks) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  auto store = MakeTestStores(db.Options());
  const int64_t id = AddEvent(*store, "c1", "room-1");
  auto claim = store->relay.ClaimDue(Batch());
  ASSERT_TRUE(claim);
  const uint64_t connection = store->relay.connection_id();
  db.Exec("BEGIN");
  db.Exec("SELECT id FROM room_outbox WHERE id = " + std::to_string(id) + " FOR UPDATE");
  const auto started = std::chrono::steady_clock::now();
  auto blocked = store->relay.MarkPublished(claim->token, std::vector<int64_t>{id}, {});
  const auto waited = std::chrono::steady_clock::now() - started;
  db.Exec("ROLLBACK");
  ASSERT_FALSE(blocked);
  EXPECT_EQ(blocked.error().code, ErrorCode::kAborted) << blocked.error().message;
  EXPECT_NE(blocked.error().message.find("[errno 1205]"), std::string::npos);
  EXPECT_TRUE(store->relay.connected()) << "a lock wait timeout is not a lost connection";
  // The session's short lock wait, not the server's 50 s default.
  EXPECT_LT(waited, std::chrono::seconds(core::MariaDbConnection::kLockWaitTimeoutSeconds + 5));
  auto marked = store->relay.MarkPublished(claim->token, std::vector<int64_t>{id}, {});
  ASSERT_TRUE(marked) << marked.error().message;
  EXPECT_EQ(*marked, 1u);
  EXPECT_EQ(store->relay.connection_id(), connection);
}

TEST(MariaDbRelayStoreTest, ClaimDueRespectsLimitAndReturnsRowsById) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  auto store = MakeTestStores(db.Options());
  std::vector<int64_t> ids;
  for (int i = 0; i < 5; ++i) {
    ids.push_back(AddEvent(*store, "c" + std::to_string(i), "room-" + std::to_string(i)));
  }
  const int64_t before = ServerNowMs(db);
  auto claim = store->relay.ClaimDue(Batch(3));
  const int64_t after = ServerNowMs(db);
  ASSERT_TRUE(claim) << claim.error().message;
  EXPECT_EQ(Ids(*claim), std::vector<int64_t>(ids.begin(), ids.begin() + 3));
  EXPECT_EQ(claim->token.size(), 32u);
  // The server's clock decides: the claim's now is the server's, the lease runs from it.
  EXPECT_GE(claim->server_now_ms, before);
  EXPECT_LE(claim->server_now_ms, after);
  EXPECT_EQ(claim->lease_until_ms, claim->server_now_ms + 30'000);
  const relay::OutboxRow& row = claim->rows[0];
  EXPECT_EQ(row.event_id, "c0-0");
  EXPECT_EQ(row.event_type, "RoomGiftSent");
  EXPECT_EQ(row.room_id, "room-0");
  EXPECT_EQ(row.envelope, "{}");
  EXPECT_EQ(row.retry_count, 0);
  EXPECT_EQ(row.created_at_ms, kT0);
  EXPECT_EQ(db.Scalar("SELECT COUNT(*) FROM room_outbox WHERE claim_token='" + claim->token +
                      "' AND next_attempt_at_ms=" + std::to_string(claim->lease_until_ms) +
                      " AND updated_at_ms=" + std::to_string(claim->server_now_ms)),
            3);
}

TEST(MariaDbRelayStoreTest, ClaimDueSkipsRowsNotYetDue) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  auto store = MakeTestStores(db.Options());
  const int64_t due = AddEvent(*store, "c1", "room-1");
  const int64_t later = AddEvent(*store, "c2", "room-2", ServerNowMs(db) + 60'000);
  auto claim = store->relay.ClaimDue(Batch());
  ASSERT_TRUE(claim) << claim.error().message;
  EXPECT_EQ(Ids(*claim), std::vector<int64_t>{due});
  ASSERT_TRUE(store->relay.MarkPublished(claim->token, Ids(*claim), {}));
  Advance(db, 60'000);
  auto next = store->relay.ClaimDue(Batch());
  ASSERT_TRUE(next) << next.error().message;
  EXPECT_EQ(Ids(*next), std::vector<int64_t>{later});
}

TEST(MariaDbRelayStoreTest, ClaimedRowsAreNotDueAgainBeforeTheLeaseEnds) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  auto store = MakeTestStores(db.Options());
  const int64_t id = AddEvent(*store, "c1", "room-1");
  auto first = store->relay.ClaimDue(Batch());
  ASSERT_TRUE(first);
  ASSERT_EQ(Ids(*first), std::vector<int64_t>{id});
  Advance(db, 25'000);
  auto during = store->relay.ClaimDue(Batch());
  ASSERT_TRUE(during);
  EXPECT_TRUE(during->rows.empty());
  EXPECT_TRUE(during->token.empty());
  Advance(db, 5'000);
  auto after = store->relay.ClaimDue(Batch());
  ASSERT_TRUE(after);
  EXPECT_EQ(Ids(*after), std::vector<int64_t>{id});
  EXPECT_NE(after->token, first->token);
}

TEST(MariaDbRelayStoreTest, ZeroLimitClaimsNothingAndBadLeaseIsRejected) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  auto store = MakeTestStores(db.Options());
  AddEvent(*store, "c1", "room-1");
  auto none = store->relay.ClaimDue(Batch(0));
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->rows.empty());
  relay::ClaimOptions bad = Batch();
  bad.lease_ms = 0;
  auto refused = store->relay.ClaimDue(bad);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(db.Scalar("SELECT COUNT(*) FROM room_outbox WHERE claim_token IS NULL"), 1);
}

TEST(MariaDbRelayStoreTest, LargeEnvelopeRoundTripsByteExact) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  auto store = MakeTestStores(db.Options());
  std::string envelope = R"({"payload":")";
  for (size_t i = 0; envelope.size() < (1u << 20); ++i) {
    envelope += static_cast<char>('a' + i % 26);
    if (i % 1000 == 0) {
      envelope += "礼物🎁";
    }
  }
  envelope += R"("})";
  AddEvents(*store, "c1", {"room-1"}, kDue, envelope);
  auto claim = store->relay.ClaimDue(Batch());
  ASSERT_TRUE(claim) << claim.error().message;
  ASSERT_EQ(claim->rows.size(), 1u);
  EXPECT_EQ(claim->rows[0].envelope.size(), envelope.size());
  EXPECT_TRUE(claim->rows[0].envelope == envelope);
}

TEST(MariaDbRelayStoreTest, NonAsciiRoomIdsRoundTrip) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  auto store = MakeTestStores(db.Options());
  const std::vector<std::string> rooms = {"直播间-一号", "room-🎉🔥", "комната"};
  AddEvents(*store, "c1", rooms);
  auto claim = store->relay.ClaimDue(Batch());
  ASSERT_TRUE(claim) << claim.error().message;
  ASSERT_EQ(claim->rows.size(), 3u);
  for (size_t i = 0; i < rooms.size(); ++i) {
    EXPECT_EQ(claim->rows[i].room_id, rooms[i]);
  }
}

TEST(MariaDbRelayStoreTest, StaleTokenCannotMarkARowReclaimedByAnotherClaim) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  auto store = MakeTestStores(db.Options());
  const int64_t id = AddEvent(*store, "c1", "room-1");
  auto stale = store->relay.ClaimDue(Batch());
  ASSERT_TRUE(stale);
  Advance(db, 60'000);  // the first lease ran out
  auto fresh = store->relay.ClaimDue(Batch());
  ASSERT_TRUE(fresh);
  ASSERT_EQ(Ids(*fresh), std::vector<int64_t>{id});

  const std::vector<int64_t> ids = {id};
  const std::vector<relay::FailedAttempt> failed = {{id, "late failure", 30'000}};
  auto published = store->relay.MarkPublished(stale->token, ids, {});
  ASSERT_TRUE(published);
  EXPECT_EQ(*published, 0u);
  auto marked = store->relay.MarkFailed(stale->token, failed);
  ASSERT_TRUE(marked);
  EXPECT_EQ(*marked, 0u);
  auto released = store->relay.Release(stale->token, ids);
  ASSERT_TRUE(released);
  EXPECT_EQ(*released, 0u);
  EXPECT_EQ(db.Scalar("SELECT retry_count FROM room_outbox"), 0);
  EXPECT_EQ(db.Query("SELECT claim_token FROM room_outbox")[0][0].value_or(""), fresh->token);

  auto by_holder = store->relay.MarkPublished(fresh->token, ids, {});
  ASSERT_TRUE(by_holder);
  EXPECT_EQ(*by_holder, 1u);
}

// A failed pack's rows are marked by one statement each, and the server's clock moves between
// them: a later row must never come due after an earlier one, or the claim that takes the pack's
// first row again would stop before the rest and send another pack in its place.
TEST(MariaDbRelayStoreTest, MarkFailedNeverMakesALaterRowOfARoomDueAfterAnEarlierOne) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  auto store = MakeTestStores(db.Options());
  const std::vector<int64_t> ids =
      AddEvents(*store, "storm", std::vector<std::string>(300, "hot-room"));
  ASSERT_EQ(ids.size(), 300u);
  auto claim = store->relay.ClaimDue(Batch(300));
  ASSERT_TRUE(claim) << claim.error().message;
  ASSERT_EQ(claim->rows.size(), 300u);
  std::vector<relay::FailedAttempt> failed;
  for (int64_t id : ids) failed.push_back({id, "unknown outcome", 10'000, false, 0});
  failed.front().pack_size = 100;
  const int64_t before = ServerNowMs(db);
  auto marked = store->relay.MarkFailed(claim->token, failed);
  ASSERT_TRUE(marked) << marked.error().message;
  EXPECT_EQ(*marked, 300u);
  EXPECT_EQ(db.Scalar("SELECT COUNT(*) FROM room_outbox a JOIN room_outbox b "
                      "ON b.room_id = a.room_id AND b.id > a.id "
                      "WHERE b.next_attempt_at_ms > a.next_attempt_at_ms"),
            0);
  EXPECT_GE(DueAt(db, ids.front()), before + 10'000);

  // Once the first row is due, one claim holds the whole room again. The room is due at its
  // retry too, read on the server's clock at the mark's room write, after the rows' statements:
  // a few ms after the first row on a busy server.
  const int64_t room_due =
      db.Scalar("SELECT due_at_ms FROM room_outbox_room WHERE room_id = 'hot-room'");
  EXPECT_GE(room_due, DueAt(db, ids.front()));
  Advance(db, std::max(DueAt(db, ids.front()), room_due) - ServerNowMs(db));
  auto again = store->relay.ClaimDue(Batch(300));
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_EQ(Ids(*again), ids);
}

// A head that recorded a pack (pack_size 5: a send of 5 events whose outcome was unknown) is
// claimed with its 5 rows, although this claim packs 2 and reads each of the three rooms' part
// of its batch of 2 messages as 2 rows, so the resend is the same pack.
TEST(MariaDbRelayStoreTest, AHeadsRecordedPackIsClaimedWholeWhateverPackEventsAndTheShare) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  auto store = MakeTestStores(db.Options());
  const std::vector<int64_t> packed = AddEvents(*store, "packed", std::vector<std::string>(6, "A"));
  const std::vector<int64_t> b = AddEvents(*store, "b", {"B", "B"});
  AddEvents(*store, "c", {"C", "C"});
  ASSERT_EQ(packed.size(), 6u);
  ASSERT_EQ(b.size(), 2u);
  db.Exec("UPDATE room_outbox SET pack_size = 5 WHERE id = " + std::to_string(packed.front()));
  relay::ClaimOptions options = Batch(2);
  options.rooms.pack_events = 2;
  auto claim = store->relay.ClaimDue(options);
  ASSERT_TRUE(claim) << claim.error().message;
  // Two messages: A's recorded pack of 5, then B's first message of 2; C waits.
  std::vector<int64_t> want(packed.begin(), packed.begin() + 5);
  want.insert(want.end(), b.begin(), b.end());
  EXPECT_EQ(Ids(*claim), want);
  EXPECT_EQ(claim->rows.front().pack_size, 5u);
  EXPECT_TRUE(claim->more_due);
}

TEST(MariaDbRelayStoreTest, MarkFailedCountsTheAttemptAndKeepsTheRowPending) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  auto store = MakeTestStores(db.Options());
  const int64_t a = AddEvent(*store, "c1", "room-1");
  const int64_t b = AddEvent(*store, "c2", "room-2");
  auto claim = store->relay.ClaimDue(Batch());
  ASSERT_TRUE(claim);
  std::string long_error;
  for (int i = 0; i < 600; ++i) {
    long_error += "错";
  }
  std::string invalid_utf8 = "bad \xff\xfe bytes";
  const std::vector<relay::FailedAttempt> failed = {{a, long_error, 5'000},
                                                    {b, invalid_utf8, 7'000}};
  const int64_t before = ServerNowMs(db);
  auto marked = store->relay.MarkFailed(claim->token, failed);
  const int64_t after = ServerNowMs(db);
  ASSERT_TRUE(marked) << marked.error().message;
  EXPECT_EQ(*marked, 2u);

  auto rows = db.Query(
      "SELECT status, retry_count, CHAR_LENGTH(last_error), "
      "next_attempt_at_ms - updated_at_ms, claim_token, updated_at_ms, last_error "
      "FROM room_outbox ORDER BY id");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(*rows[0][0], "pending");
  EXPECT_EQ(*rows[0][1], "1");
  EXPECT_EQ(*rows[0][2], "512");
  // Due retry_after_ms after the server's now at the mark, which is also updated_at_ms.
  EXPECT_EQ(*rows[0][3], "5000");
  EXPECT_FALSE(rows[0][4].has_value());
  EXPECT_GE(std::stoll(*rows[0][5]), before);
  EXPECT_LE(std::stoll(*rows[0][5]), after);
  EXPECT_EQ(*rows[1][6], "bad ?? bytes");
  EXPECT_EQ(*rows[1][3], "7000");

  // Due again at its retry time, with the count carried along.
  Advance(db, 5'000);
  auto retry = store->relay.ClaimDue(Batch());
  ASSERT_TRUE(retry);
  ASSERT_EQ(Ids(*retry), std::vector<int64_t>{a});
  EXPECT_EQ(retry->rows[0].retry_count, 1);
  ASSERT_TRUE(store->relay.MarkFailed(retry->token,
                                      std::vector<relay::FailedAttempt>{{a, "again", 4'000}}));
  EXPECT_EQ(db.Scalar("SELECT retry_count FROM room_outbox WHERE id=" + std::to_string(a)), 2);
}

TEST(MariaDbRelayStoreTest, MarkPublishedSetsPublishedAndClearsLastError) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  auto store = MakeTestStores(db.Options());
  const int64_t id = AddEvent(*store, "c1", "room-1");
  ASSERT_NO_FATAL_FAILURE(ClaimAndFail(*store, id, "boom"));
  auto again = store->relay.ClaimDue(Batch());
  ASSERT_TRUE(again);
  ASSERT_EQ(Ids(*again), std::vector<int64_t>{id});
  const int64_t before = ServerNowMs(db);
  auto marked = store->relay.MarkPublished(again->token, std::vector<int64_t>{id}, {});
  const int64_t after = ServerNowMs(db);
  ASSERT_TRUE(marked) << marked.error().message;
  EXPECT_EQ(*marked, 1u);
  auto rows = db.Query(
      "SELECT status, last_error, published_at_ms, claim_token, retry_count, updated_at_ms "
      "FROM room_outbox");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(*rows[0][0], "published");
  EXPECT_FALSE(rows[0][1].has_value());
  EXPECT_GE(std::stoll(*rows[0][2]), before);
  EXPECT_LE(std::stoll(*rows[0][2]), after);
  EXPECT_EQ(*rows[0][5], *rows[0][2]);
  EXPECT_FALSE(rows[0][3].has_value());
  EXPECT_EQ(*rows[0][4], "1");
  Advance(db, 1'000'000);
  auto later = store->relay.ClaimDue(Batch());
  ASSERT_TRUE(later);
  EXPECT_TRUE(later->rows.empty());
}

TEST(MariaDbRelayStoreTest, MarkPublishedHandlesLargeBatches) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  auto store = MakeTestStores(db.Options());
  // 700 rows cross the largest placeholder list (512) and need a padded second chunk.
  std::vector<std::string> rooms;
  for (int i = 0; i < 700; ++i) {
    rooms.push_back("room-" + std::to_string(i));
  }
  auto ids = AddEvents(*store, "c1", rooms);
  ASSERT_EQ(ids.size(), 700u);
  auto claim = store->relay.ClaimDue(Batch(1000));
  ASSERT_TRUE(claim) << claim.error().message;
  ASSERT_EQ(claim->rows.size(), 700u);
  std::vector<int64_t> claimed = Ids(*claim);
  std::vector<int64_t> part(claimed.begin(), claimed.begin() + 699);
  auto marked = store->relay.MarkPublished(claim->token, part, {});
  ASSERT_TRUE(marked) << marked.error().message;
  EXPECT_EQ(*marked, 699u);
  EXPECT_EQ(db.Scalar("SELECT COUNT(*) FROM room_outbox WHERE status='published'"), 699);
  EXPECT_EQ(db.Scalar("SELECT COUNT(*) FROM room_outbox WHERE status='pending' AND id=" +
                      std::to_string(claimed.back())),
            1);
}

TEST(MariaDbRelayStoreTest, ReleaseMakesRowsDueAtOnceAndKeepsRetryCount) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  auto store = MakeTestStores(db.Options());
  const int64_t id = AddEvent(*store, "c1", "room-1");
  ASSERT_NO_FATAL_FAILURE(ClaimAndFail(*store, id, "x"));
  auto second = store->relay.ClaimDue(Batch());
  ASSERT_TRUE(second);
  const int64_t before = ServerNowMs(db);
  auto released = store->relay.Release(second->token, std::vector<int64_t>{id});
  const int64_t after = ServerNowMs(db);
  ASSERT_TRUE(released) << released.error().message;
  EXPECT_EQ(*released, 1u);
  auto rows = db.Query(
      "SELECT retry_count, next_attempt_at_ms, claim_token, status "
      "FROM room_outbox");
  EXPECT_EQ(*rows[0][0], "1");
  EXPECT_GE(std::stoll(*rows[0][1]), before);
  EXPECT_LE(std::stoll(*rows[0][1]), after);
  EXPECT_FALSE(rows[0][2].has_value());
  EXPECT_EQ(*rows[0][3], "pending");
  auto third = store->relay.ClaimDue(Batch());
  ASSERT_TRUE(third);
  EXPECT_EQ(Ids(*third), std::vector<int64_t>{id});
}

TEST(MariaDbRelayStoreTest, PerRoomOrderHoldsBackRowsBehindAFailedHead) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  auto store = MakeTestStores(db.Options());
  const int64_t a1 = AddEvent(*store, "a1", "A");
  const int64_t a2 = AddEvent(*store, "a2", "A");
  const int64_t a3 = AddEvent(*store, "a3", "A");
  const int64_t b1 = AddEvent(*store, "b1", "B");
  const int64_t b2 = AddEvent(*store, "b2", "B");
  // a1 alone is claimed and fails: it waits for its retry 10 s later.
  ASSERT_NO_FATAL_FAILURE(ClaimHeadAndFail(*store, a1, 10'000));

  auto unordered = store->relay.ClaimDue(Batch(100, false));
  ASSERT_TRUE(unordered) << unordered.error().message;
  EXPECT_EQ(Ids(*unordered), (std::vector<int64_t>{a2, a3, b1, b2}));
  ASSERT_TRUE(store->relay.Release(unordered->token, Ids(*unordered)));

  auto ordered = store->relay.ClaimDue(Batch());
  ASSERT_TRUE(ordered) << ordered.error().message;
  EXPECT_EQ(Ids(*ordered), (std::vector<int64_t>{b1, b2}));
  EXPECT_EQ(db.Scalar("SELECT COUNT(*) FROM room_outbox WHERE room_id='A' AND "
                      "claim_token IS NOT NULL"),
            0);  // a2, a3 were not leased
  // The claim starts from the due heads: a room whose head waits is not read at all, so its
  // other rows are left as they are.
  EXPECT_LT(DueAt(db, a2), DueAt(db, a1));
  EXPECT_LT(DueAt(db, a3), DueAt(db, a1));
  ASSERT_TRUE(store->relay.Release(ordered->token, Ids(*ordered)));

  // Once the head is due again the whole room comes back in order.
  Advance(db, 10'000);
  auto later = store->relay.ClaimDue(Batch());
  ASSERT_TRUE(later) << later.error().message;
  EXPECT_EQ(Ids(*later), (std::vector<int64_t>{a1, a2, a3, b1, b2}));
}

TEST(MariaDbRelayStoreTest, PerRoomOrderHoldsBackRowsWhileTheHeadIsLeased) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  auto store = MakeTestStores(db.Options());
  auto other = MakeTestStores(db.Options());
  const int64_t a1 = AddEvent(*store, "a1", "A");
  const int64_t a2 = AddEvent(*store, "a2", "A");
  const int64_t b1 = AddEvent(*store, "b1", "B");
  auto first = store->relay.ClaimDue(Batch(1));
  ASSERT_TRUE(first);
  ASSERT_EQ(Ids(*first), std::vector<int64_t>{a1});
  const int64_t a2_due = DueAt(db, a2);
  auto second = other->relay.ClaimDue(Batch());
  ASSERT_TRUE(second);
  EXPECT_EQ(Ids(*second), std::vector<int64_t>{b1});
  EXPECT_EQ(DueAt(db, a2), a2_due) << "a row behind a head in flight keeps its time";
  ASSERT_TRUE(store->relay.MarkPublished(first->token, std::vector<int64_t>{a1}, {}));
  auto third = other->relay.ClaimDue(Batch());
  ASSERT_TRUE(third);
  EXPECT_EQ(Ids(*third), std::vector<int64_t>{a2});
}

TEST(MariaDbRelayStoreTest, PerRoomOrderClaimsOnlyARunFromTheRoomHead) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  auto store = MakeTestStores(db.Options());
  const int64_t a1 = AddEvent(*store, "a1", "A", 5);  // due last, but first in its room
  const int64_t a2 = AddEvent(*store, "a2", "A", 0);
  const int64_t a3 = AddEvent(*store, "a3", "A", 0);
  // The limit cuts the head out of the window: a2, a3 come first in due order and must not be
  // taken alone. The claim reads the room from its head and takes the run a1, a2.
  auto cut = store->relay.ClaimDue(Batch(2));
  ASSERT_TRUE(cut) << cut.error().message;
  EXPECT_EQ(Ids(*cut), (std::vector<int64_t>{a1, a2}));
  EXPECT_TRUE(cut->more_due);
  EXPECT_EQ(DueAt(db, a3), 0) << "a due row left out keeps its time";
  ASSERT_TRUE(store->relay.MarkPublished(cut->token, Ids(*cut), {}));
  auto rest = store->relay.ClaimDue(Batch(3));
  ASSERT_TRUE(rest);
  EXPECT_EQ(Ids(*rest), (std::vector<int64_t>{a3}));
  EXPECT_FALSE(rest->more_due);
}

// A backlog larger than the limit whose rows became due before their rooms' heads (rows held
// behind a failed head are released at once; the head retries later): every claim must still
// reach the heads instead of selecting the same unclaimable rows again and again.
TEST(MariaDbRelayStoreTest, PerRoomOrderReachesHeadsBehindALargerBacklog) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  auto store = MakeTestStores(db.Options());
  std::vector<int64_t> heads;
  for (const char* room : {"A", "B", "C"}) {
    heads.push_back(AddEvent(*store, std::string("head-") + room, room, 1000));
  }
  for (const char* room : {"A", "B", "C"}) {
    std::vector<std::string> rooms(80, room);
    AddEvents(*store, std::string("rest-") + room, rooms, 0);
  }
  // Each claim pushes the rows it cannot use behind their heads; within a few claims of 100
  // the heads come first.
  core::Result<relay::Claim> claim = relay::Claim{};
  for (int k = 0; k < 4 && claim && claim->rows.empty(); ++k) {
    claim = store->relay.ClaimDue(Batch(100));
  }
  ASSERT_TRUE(claim) << claim.error().message;
  ASSERT_FALSE(claim->rows.empty());
  EXPECT_EQ(claim->rows.front().id, heads[0]);
  std::set<std::string> rooms_claimed;
  for (const auto& row : claim->rows) {
    rooms_claimed.insert(row.room_id);
  }
  // Every claimed room starts at its head.
  for (const std::string& room : rooms_claimed) {
    auto first = std::find_if(claim->rows.begin(), claim->rows.end(),
                              [&room](const relay::OutboxRow& r) { return r.room_id == room; });
    EXPECT_EQ(first->event_id, "head-" + room + "-0");
  }
}

TEST(MariaDbRelayStoreTest, BlockedRoomDoesNotStarveOtherRooms) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  auto store = MakeTestStores(db.Options());
  const int64_t a1 = AddEvent(*store, "a1", "A");
  std::vector<std::string> many(150, "A");
  AddEvents(*store, "a-rest", many);
  const int64_t b1 = AddEvent(*store, "b1", "B");
  ASSERT_NO_FATAL_FAILURE(ClaimHeadAndFail(*store, a1, 60'000));
  // 150 due rows of A sit ahead of b1 in due order, behind A's failed head: the first claim
  // reaches b1, and reads none of A's rows (their times are left as they are).
  const int64_t a_due_before =
      db.Scalar("SELECT SUM(next_attempt_at_ms) FROM room_outbox WHERE room_id = 'A' AND id > " +
                std::to_string(a1));
  auto first = store->relay.ClaimDue(Batch(100));
  ASSERT_TRUE(first) << first.error().message;
  EXPECT_EQ(Ids(*first), std::vector<int64_t>{b1});
  EXPECT_FALSE(first->more_due);
  EXPECT_EQ(db.Scalar("SELECT SUM(next_attempt_at_ms) FROM room_outbox WHERE room_id = 'A' AND "
                      "id > " +
                      std::to_string(a1)),
            a_due_before);
}

relay::ClaimOptions Paced(size_t run_cut_rows, int64_t room_min_interval_ms) {
  relay::ClaimOptions options = Batch();
  options.rooms.run_cut_rows = run_cut_rows;
  options.rooms.room_min_interval_ms = room_min_interval_ms;
  return options;
}

// A busy room's run is cut at run_cut_rows: the claim leases that run and leaves the room's other
// rows as they are (more_due); the room is not due while the run is in flight, so the next claims
// take other rooms' rows; once the run is marked, the room is due again after the store's room gap
// (room_min_interval), whichever relay claims it, and the next claim takes its next run.
TEST(MariaDbRelayStoreTest, PacedClaimCutsABusyRoomAndItsMarksBringItBackAfterItsGap) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  // A long room_min_interval, so the test's own run time never makes the room due by itself.
  constexpr int64_t kInterval = 10'000;
  auto store = MakeTestStores(db.Options());
  relay::MariaDbRelayStore relay(db.Options(), kInterval);
  std::vector<int64_t> hot;
  std::vector<int64_t> quiet;
  for (int i = 0; i < 8; ++i) {
    hot.push_back(AddEvent(*store, "h" + std::to_string(i), "hot"));
    if (i % 4 == 0) quiet.push_back(AddEvent(*store, "q" + std::to_string(i), "quiet"));
  }
  const int64_t hot_due = DueAt(db, hot[3]);
  auto first = relay.ClaimDue(Paced(3, kInterval));
  ASSERT_TRUE(first) << first.error().message;
  EXPECT_EQ(Ids(*first), (std::vector<int64_t>{hot[0], quiet[0], hot[1], hot[2], quiet[1]}));
  EXPECT_TRUE(first->more_due) << "the cut room has more rows";
  EXPECT_TRUE(first->paced_rooms.empty());
  EXPECT_EQ(DueAt(db, hot[3]), hot_due) << "not leased, not moved";

  // Nothing of the hot room is claimed while its run is in flight; a new room's row is.
  const int64_t q2 = AddEvent(*store, "q-late", "late");
  auto meanwhile = relay.ClaimDue(Paced(3, kInterval));
  ASSERT_TRUE(meanwhile);
  EXPECT_EQ(Ids(*meanwhile), std::vector<int64_t>{q2});
  ASSERT_TRUE(relay.MarkPublished(meanwhile->token, Ids(*meanwhile), {}));

  // Marked: the hot room is due a room gap later, not at once.
  ASSERT_TRUE(relay.MarkPublished(first->token, Ids(*first), {}));
  auto early = relay.ClaimDue(Paced(3, kInterval));
  ASSERT_TRUE(early);
  EXPECT_TRUE(early->rows.empty());
  Advance(db, kInterval);
  auto next = relay.ClaimDue(Paced(3, kInterval));
  ASSERT_TRUE(next);
  EXPECT_EQ(Ids(*next), (std::vector<int64_t>{hot[3], hot[4], hot[5]}));
}

// A cut never moves a row: the rows after the run keep their times, and a failed row waiting for
// its retry keeps its own; without room_min_interval nothing is cut.
TEST(MariaDbRelayStoreTest, PacedClaimNeverMovesARow) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  auto store = MakeTestStores(db.Options());
  std::vector<int64_t> rows;
  for (int i = 0; i < 4; ++i) rows.push_back(AddEvent(*store, "r" + std::to_string(i), "room"));
  // A failed row waiting for its retry.
  const int64_t late = AddEvent(*store, "r-late", "room", ServerNowMs(db) + 100'000);
  db.Exec("UPDATE room_outbox SET retry_count = 1 WHERE id = " + std::to_string(late));
  const int64_t late_due = DueAt(db, late);

  auto whole = store->relay.ClaimDue(Paced(2, 0));
  ASSERT_TRUE(whole);
  EXPECT_EQ(Ids(*whole), rows) << "run_cut_rows needs room_min_interval";
  ASSERT_TRUE(store->relay.Release(whole->token, Ids(*whole)));
  const int64_t third_due = DueAt(db, rows[3]);

  auto cut = store->relay.ClaimDue(Paced(2, 50));
  ASSERT_TRUE(cut);
  EXPECT_EQ(Ids(*cut), (std::vector<int64_t>{rows[0], rows[1]}));
  EXPECT_TRUE(cut->more_due);
  EXPECT_EQ(DueAt(db, rows[3]), third_due);
  EXPECT_EQ(DueAt(db, late), late_due);
}

// Rows of types that are never sent do not count toward the cut: a run of two sent rows holds the
// skipped row between them.
TEST(MariaDbRelayStoreTest, PacedClaimCountsOnlyRowsThatAreSent) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  auto store = MakeTestStores(db.Options());
  std::vector<int64_t> rows;
  for (int i = 0; i < 7; ++i) rows.push_back(AddEvent(*store, "r" + std::to_string(i), "room"));
  // sent, skipped, sent, skipped, sent, sent, skipped
  db.Exec("UPDATE room_outbox SET event_type = 'RoomHeatChanged' WHERE id IN (" +
          std::to_string(rows[1]) + ", " + std::to_string(rows[3]) + ", " +
          std::to_string(rows[6]) + ")");
  relay::ClaimOptions options = Paced(2, 50);
  options.rooms.skip_event_types = {"RoomHeatChanged"};
  auto claim = store->relay.ClaimDue(options);
  ASSERT_TRUE(claim) << claim.error().message;
  EXPECT_EQ(Ids(*claim), (std::vector<int64_t>{rows[0], rows[1], rows[2]}));
  EXPECT_TRUE(claim->more_due);
}

TEST(MariaDbRelayStoreTest, ConcurrentStoresNeverClaimTheSameRow) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  auto writer = MakeTestStores(db.Options());
  std::set<int64_t> all;
  for (int c = 0; c < 20; ++c) {
    std::vector<std::string> rooms;
    for (int i = 0; i < 50; ++i) {
      rooms.push_back("room-" + std::to_string((c * 50 + i) % 37));
    }
    for (int64_t id : AddEvents(*writer, "c" + std::to_string(c), rooms)) {
      all.insert(id);
    }
  }
  ASSERT_EQ(all.size(), 1000u);

  for (bool per_room_order : {false, true}) {
    SCOPED_TRACE(per_room_order ? "per-room order" : "no order");
    db.Exec(
        "UPDATE room_outbox SET status='pending', claim_token=NULL, next_attempt_at_ms=0, "
        "room_listed = 0");
    std::atomic<size_t> claimed_total{0};
    std::vector<int64_t> got[2];
    std::string errors[2];
    auto worker = [&](int w) {
      auto store = MakeTestStores(db.Options());
      for (int round = 0; round < 2000 && claimed_total.load() < all.size(); ++round) {
        auto claim = store->relay.ClaimDue(Batch(25, per_room_order));
        if (!claim) {
          errors[w] += claim.error().message + "\n";
          continue;
        }
        for (const auto& row : claim->rows) {
          got[w].push_back(row.id);
        }
        claimed_total += claim->rows.size();
        if (!claim->rows.empty()) {
          auto marked = store->relay.MarkPublished(claim->token, Ids(*claim), {});
          if (!marked || *marked != claim->rows.size()) {
            errors[w] += "mark failed\n";
          }
        }
      }
    };
    std::thread t0(worker, 0);
    std::thread t1(worker, 1);
    t0.join();
    t1.join();
    EXPECT_EQ(errors[0], "");
    EXPECT_EQ(errors[1], "");
    EXPECT_FALSE(got[0].empty());
    EXPECT_FALSE(got[1].empty());
    std::set<int64_t> s0(got[0].begin(), got[0].end());
    std::set<int64_t> s1(got[1].begin(), got[1].end());
    EXPECT_EQ(s0.size(), got[0].size());
    EXPECT_EQ(s1.size(), got[1].size());
    std::vector<int64_t> both;
    std::set_intersection(s0.begin(), s0.end(), s1.begin(), s1.end(), std::back_inserter(both));
    EXPECT_TRUE(both.empty()) << both.size() << " rows claimed twice";
    std::set<int64_t> any = s0;
    any.insert(s1.begin(), s1.end());
    EXPECT_EQ(any, all);
    EXPECT_EQ(db.Scalar("SELECT COUNT(*) FROM room_outbox WHERE status='published'"), 1000);
  }
}

TEST(MariaDbRelayStoreTest, StatsCountPendingRowsTheOldestAgeAndRoomsHeldBack) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  auto store = MakeTestStores(db.Options());
  auto empty = store->relay.Stats();
  ASSERT_TRUE(empty) << empty.error().message;
  EXPECT_EQ(empty->pending, 0);
  EXPECT_EQ(empty->oldest_pending_age_ms, 0);
  EXPECT_EQ(empty->rooms_held_back, 0);
  EXPECT_EQ(empty->rooms_waiting, 0);
  AddEvents(*store, "c1", {"A", "B", "C", "C"});
  const int64_t now = ServerNowMs(db);
  db.Exec("UPDATE room_outbox SET created_at_ms = " + std::to_string(now - 100'000) + " + id");
  const int64_t oldest = db.Scalar("SELECT MIN(created_at_ms) FROM room_outbox");
  auto claim = store->relay.ClaimDue(Batch(1));
  ASSERT_TRUE(claim);
  ASSERT_TRUE(store->relay.MarkPublished(claim->token, Ids(*claim), {}));
  // Both of C's rows have failed: one room held back, counted once. B's head has not failed.
  db.Exec("UPDATE room_outbox SET retry_count = 2 WHERE room_id = 'C'");
  const int64_t before = ServerNowMs(db);
  auto stats = store->relay.Stats();
  const int64_t after = ServerNowMs(db);
  ASSERT_TRUE(stats);
  EXPECT_EQ(stats->pending, 3);
  // The server's now minus the oldest pending created_at_ms (A's row was published).
  EXPECT_GE(stats->oldest_pending_age_ms, before - (oldest + 1));
  EXPECT_LE(stats->oldest_pending_age_ms, after - (oldest + 1));
  EXPECT_EQ(stats->rooms_held_back, 1);
  EXPECT_EQ(stats->rooms_waiting, 2);  // B and C: their heads were committed 100 s ago (A's went)
  // B's head fails, but nothing waits behind it: B holds nothing back until a second row comes.
  db.Exec("UPDATE room_outbox SET retry_count = 1 WHERE room_id = 'B'");
  EXPECT_EQ(store->relay.Stats()->rooms_held_back, 1);
  AddEvents(*store, "c2", {"B"});
  EXPECT_EQ(store->relay.Stats()->rooms_held_back, 2);
  // A created_at_ms ahead of the server (a hook host's clock) never makes a negative age.
  db.Exec("UPDATE room_outbox SET created_at_ms = " + std::to_string(now + 3'600'000));
  EXPECT_EQ(store->relay.Stats()->oldest_pending_age_ms, 0);
}

// rooms_waiting counts the rooms of the room schedule whose head has been pending for over
// kRoomWaitingMs, once each however many rows wait behind it; rooms_backlogged those with pending
// rows (a room whose rows were all published since is not counted).
TEST(MariaDbRelayStoreTest, StatsCountTheRoomsWhoseHeadHasWaited) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  auto store = MakeTestStores(db.Options());
  AddEvents(*store, "c1", {"old", "old", "old", "new", "gone"});
  // The rooms on the room schedule, as a claim's listing puts them there.
  db.Exec(
      "INSERT INTO room_outbox_room (room_id, due_at_ms, updated_at_ms) SELECT DISTINCT room_id, "
      "0, 0 FROM "
      "room_outbox");
  const int64_t now = ServerNowMs(db);
  db.Exec("UPDATE room_outbox SET created_at_ms = " +
          std::to_string(now - relay::kRoomWaitingMs - 60'000) +
          " WHERE room_id IN ('old', 'gone')");
  db.Exec("UPDATE room_outbox SET created_at_ms = " + std::to_string(now) +
          " WHERE room_id = 'new'");
  db.Exec("UPDATE room_outbox SET status = 'published' WHERE room_id = 'gone'");
  for (int k = 0; k < 2; ++k) {  // the same answer on a second read of the same connection
    auto stats = store->relay.Stats();
    ASSERT_TRUE(stats) << stats.error().message;
    EXPECT_EQ(stats->rooms_waiting, 1) << "read " << k;
    EXPECT_EQ(stats->rooms_backlogged, 2) << "read " << k;
  }
}

// The claim's window walks idx_pending_due for the table shapes that matter: published rows
// dominating (as in production) and a backlog where every row is pending. (A table of a few rows
// is read whole and sorted, which the optimizer rightly finds cheaper.)
TEST(MariaDbRelayStoreTest, ClaimQueriesWalkThePendingIndexWithoutFilesort) {
  struct Shape {
    std::string name;
    int rows;
    std::string status;
  };
  const Shape shapes[] = {
      {"mostly published", 20000, "IF(seq % 10 = 0, 'pending', 'published')"},
      {"all pending", 20000, "'pending'"},
  };
  const std::string now = std::to_string(10'000);
  struct Plan {
    std::string name;
    std::string sql;
  };
  const Plan plans[] = {
      {"claim_window", WithLiterals(core::sql::kClaimWindow, {now, "100"})},
  };
  for (const Shape& shape : shapes) {
    SCOPED_TRACE(shape.name);
    TestDatabase db;
    ASSERT_TRUE(db.valid());
    db.Exec(
        "INSERT INTO room_outbox (event_id, event_type, room_id, command_id, envelope, status, "
        "next_attempt_at_ms, created_at_ms, updated_at_ms) "
        "SELECT CONCAT('e', seq), 'T', CONCAT('room-', seq % 97), CONCAT('c', seq), '{}', " +
        shape.status + ", seq, seq, seq FROM seq_1_to_" + std::to_string(shape.rows));
    db.Exec("ANALYZE TABLE room_outbox");
    for (const Plan& plan : plans) {
      SCOPED_TRACE(plan.name);
      auto rows = db.Query("EXPLAIN " + plan.sql);
      ASSERT_FALSE(rows.empty());
      // EXPLAIN columns: id, select_type, table, type, possible_keys, key, key_len, ref, rows,
      // Extra. The first row is the outer scan of room_outbox.
      EXPECT_EQ(rows[0][5].value_or(""), "idx_pending_due");
      for (const auto& row : rows) {
        const std::string extra = row[9].value_or("");
        EXPECT_EQ(extra.find("filesort"), std::string::npos) << extra;
        EXPECT_NE(row[3].value_or(""), "ALL") << "full scan of " << row[2].value_or("");
      }
    }
  }
}

// The room schedule's reads walk their indexes, never the table: the rooms due (idx_room_due, in
// due order, no filesort) and the rows to list (idx_unlisted), over a table of mostly published
// rows, most of them listed long ago.
TEST(MariaDbRelayStoreTest, TheRoomScheduleReadsWalkTheirIndexes) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  db.Exec(
      "INSERT INTO room_outbox (event_id, event_type, room_id, command_id, envelope, status, "
      "next_attempt_at_ms, created_at_ms, updated_at_ms, room_listed) "
      "SELECT CONCAT('e', seq), 'T', CONCAT('room-', seq % 997), CONCAT('c', seq), '{}', "
      "IF(seq % 10 = 0, 'pending', 'published'), seq, seq, seq, seq % 20 <> 0 "
      "FROM seq_1_to_20000");
  db.Exec(
      "INSERT INTO room_outbox_room (room_id, due_at_ms, updated_at_ms) SELECT CONCAT('room-', "
      "seq), seq * 10, 0 "
      "FROM seq_0_to_996");
  db.Exec("ANALYZE TABLE room_outbox, room_outbox_room");
  struct Plan {
    std::string sql;
    std::string index;
  };
  const Plan plans[] = {
      {WithLiterals(core::sql::kDueRooms, {"100"}), "idx_room_due"},
      {WithLiterals(core::sql::kListArrivals, {"5000", "500"}), "idx_unlisted"},
  };
  for (const Plan& plan : plans) {
    SCOPED_TRACE(plan.sql);
    auto rows = db.Query("EXPLAIN " + plan.sql);
    ASSERT_FALSE(rows.empty());
    EXPECT_EQ(rows[0][5].value_or(""), plan.index);
    for (const auto& row : rows) {
      EXPECT_EQ(row[9].value_or("").find("filesort"), std::string::npos) << row[9].value_or("");
      EXPECT_NE(row[3].value_or(""), "ALL") << "full scan of " << row[2].value_or("");
      EXPECT_NE(row[3].value_or(""), "index") << "a full walk of " << row[5].value_or("");
    }
  }
}

}  // namespace
}  // namespace room_outbox::testing
