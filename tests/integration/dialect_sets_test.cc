// Both statement sets against the test MariaDB, whatever ROOM_OUTBOX_TEST_MYSQL_DIALECT forces for
// the rest of the suite: the dialect read from the handshake, each set's commit writing the same
// rows and reading the same ids, clock and per-room check (the MySQL set by its read-back SELECT),
// the per-room check never waiting for a claim's locks in either set, and statements prepared at
// connect so a schema they do not fit fails the connect, naming the statement.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/mysql/connection.h"
#include "store/mariadb_hook_store.h"
#include "store/mariadb_relay_store.h"
#include "support/test_database.h"

namespace room_outbox::testing {
namespace {

using ::testing::HasSubstr;

constexpr SqlDialect kSets[] = {SqlDialect::kMariaDb, SqlDialect::kMySql};

MysqlOptions WithSet(const TestDatabase& db, SqlDialect set) {
  MysqlOptions options = db.Options();
  options.dialect = set;
  return options;
}

internal::CommitRequest Request(const std::string& command_id, const std::string& room,
                                size_t events, const std::string& token = "tok-hook") {
  internal::CommitRequest request;
  request.command = Command{command_id, room, "SendGift", "req-" + command_id, 7, "{}"};
  request.token = token;
  request.sync_lease = std::chrono::milliseconds(token.empty() ? 0 : 800);
  for (size_t i = 0; i < events; ++i) {
    const std::string event_id = command_id + "-e" + std::to_string(i);
    request.rows.push_back(internal::NewOutboxRow{event_id, i == 1 ? "RoomCreated" : "RoomGiftSent",
                                                  room, command_id, request.command.request_id,
                                                  R"({"event_id":")" + event_id + R"("})", i == 1});
  }
  return request;
}

TEST(DialectSetsTest, TheHandshakeSaysMariaDbAndASetCanBeForced) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  auto detected = core::MariaDbConnection::Connect(WithSet(db, SqlDialect::kAuto));
  ASSERT_TRUE(detected) << detected.error().message;
  EXPECT_EQ((*detected)->dialect().server.vendor, core::ServerVendor::kMariaDb);
  EXPECT_GE((*detected)->dialect().server.number, core::kMinMariaDbVersion);
  EXPECT_EQ((*detected)->dialect().statements, core::StatementSet::kMariaDb);
  EXPECT_TRUE((*detected)->dialect().returning);
  auto forced = core::MariaDbConnection::Connect(WithSet(db, SqlDialect::kMySql));
  ASSERT_TRUE(forced) << forced.error().message;
  EXPECT_EQ((*forced)->dialect().server.vendor, core::ServerVendor::kMariaDb);
  EXPECT_EQ((*forced)->dialect().statements, core::StatementSet::kMySql);
  EXPECT_FALSE((*forced)->dialect().returning);
}

TEST(DialectSetsTest, BothSetsCommitTheSameRowsAndReadTheSameIdsClockAndCheck) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  for (SqlDialect set : kSets) {
    const std::string p = SqlDialectName(set);
    auto store = internal::MakeMariaDbHookStore(WithSet(db, set));
    const int64_t before = db.Scalar("SELECT " + std::string(core::sql::kServerNowMs));
    for (size_t events : {0u, 1u, 3u, 17u}) {
      const internal::CommitRequest request = Request(p + "-c" + std::to_string(events), p, events);
      auto write = store->CommitCommand(request, {});
      ASSERT_TRUE(write) << p << ": " << write.error().message;
      ASSERT_EQ(write->outcome, internal::CommitOutcome::kCommitted) << p;
      EXPECT_GE(write->server_now_ms, before) << p;
      EXPECT_EQ(write->server_now_ms,
                db.Scalar("SELECT created_at_ms FROM room_command_log WHERE command_id = '" +
                          request.command.command_id + "'"))
          << p;
      // The room has pending rows from the second command on (the first has none).
      EXPECT_EQ(write->earlier_pending, events > 1) << p << " " << events;
      const auto rows =
          db.Query("SELECT id, event_id, status FROM room_outbox WHERE command_id = '" +
                   request.command.command_id + "' ORDER BY id");
      ASSERT_EQ(rows.size(), events) << p;
      ASSERT_EQ(write->row_ids.size(), events) << p;
      for (size_t i = 0; i < events; ++i) {
        EXPECT_EQ(*rows[i][0], std::to_string(write->row_ids[i])) << p << " row " << i;
        EXPECT_EQ(*rows[i][1], request.rows[i].event_id) << p << " row " << i;
        EXPECT_EQ(*rows[i][2], i == 1 ? "published" : "pending") << p << " row " << i;
      }
    }
    // A repeated command writes nothing in either set.
    auto again = store->CommitCommand(Request(p + "-c3", p, 3), {});
    ASSERT_TRUE(again) << p;
    EXPECT_EQ(again->outcome, internal::CommitOutcome::kDuplicate) << p;
  }
}

TEST(DialectSetsTest, TheRoomCheckNeverWaitsForAClaimInEitherSet) {
  for (SqlDialect set : kSets) {
    TestDatabase db;
    ASSERT_TRUE(db.valid());
    auto store = internal::MakeMariaDbHookStore(WithSet(db, set));
    ASSERT_TRUE(store->CommitCommand(Request("c1", "room-1", 2, ""), {}));
    db.Exec("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED");
    db.Exec("BEGIN");
    ASSERT_EQ(db.Query("SELECT id FROM room_outbox WHERE room_id = 'room-1' AND "
                       "status = 'pending' FOR UPDATE")
                  .size(),
              1u);  // the command's second row was written published
    auto write = store->CommitCommand(Request("c2", "room-1", 1), {});
    db.Exec("ROLLBACK");
    ASSERT_TRUE(write) << SqlDialectName(set) << ": " << write.error().message;
    EXPECT_TRUE(write->earlier_pending) << SqlDialectName(set);
  }
}

TEST(DialectSetsTest, StatementsArePreparedAtConnectSoAnUnfitSchemaFailsThere) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  db.Exec("ALTER TABLE room_outbox DROP COLUMN drop_count");
  for (SqlDialect set : kSets) {
    auto relay = relay::MakeMariaDbRelayStore(WithSet(db, set));
    auto connected = relay->Connect();
    ASSERT_FALSE(connected) << SqlDialectName(set);
    EXPECT_THAT(connected.error().message, HasSubstr("claim_window")) << SqlDialectName(set);
    EXPECT_THAT(connected.error().message, HasSubstr("drop_count")) << SqlDialectName(set);
    // The hook's statements do not use the column: its store connects.
    auto hook = internal::MakeMariaDbHookStore(WithSet(db, set));
    EXPECT_TRUE(hook->Connect()) << SqlDialectName(set);
  }
}

}  // namespace
}  // namespace room_outbox::testing
