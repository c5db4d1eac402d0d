// Both statement sets against the test MariaDB, whatever ROOM_OUTBOX_TEST_MYSQL_DIALECT forces for
// the rest of the suite: the dialect read from the handshake, each set's commit writing the same
// rows and reading the same ids, clock and per-room check (the MySQL set by its read-back SELECT),
// the read-back sent for leased rows only and read from idx_command_id alone, both sets
// committing on a schema before 008, the per-room check never waiting for a claim's locks in
// either set, and statements prepared at connect so a schema they do not fit fails the connect,
// naming the statement.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/mysql/connection.h"
#include "core/mysql/outbox_sql.h"
#include "core/mysql/statement_count.h"
#include "store/mariadb_hook_store.h"
#include "store/mariadb_relay_store.h"
#include "support/mysql_admin.h"
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

// The command's rows as the database holds them match what the commit returned.
void ExpectIdsOf(TestDatabase& db, const internal::CommitRequest& request,
                 const internal::CommitWrite& write, const std::string& trace) {
  const auto rows = db.Query("SELECT id, event_id FROM room_outbox WHERE command_id = '" +
                             request.command.command_id + "' ORDER BY id");
  ASSERT_EQ(rows.size(), request.rows.size()) << trace;
  ASSERT_EQ(write.row_ids.size(), request.rows.size()) << trace;
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(*rows[i][0], std::to_string(write.row_ids[i])) << trace << " row " << i;
    EXPECT_EQ(*rows[i][1], request.rows[i].event_id) << trace << " row " << i;
  }
}

// Statements sent for one commit (prepares are not statements: core/mysql/statement_count.h).
size_t StatementsOf(internal::MariaDbHookStore& store, const internal::CommitRequest& request,
                    internal::CommitWrite& write) {
  const uint64_t before = core::StatementsSent();
  auto done = store.CommitCommand(request, {});
  const uint64_t sent = core::StatementsSent() - before;
  EXPECT_TRUE(done) << done.error().message;
  if (done) write = *done;
  return static_cast<size_t>(sent);
}

// Rows written for the relay alone need no ids, clock or check: the MySQL set sends no read-back
// for them, so that commit is the MariaDB set's four statements (BEGIN, the two inserts, COMMIT);
// leased rows it reads back, one statement more.
TEST(DialectSetsTest, TheMySqlSetReadsBackLeasedRowsOnly) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  for (SqlDialect set : kSets) {
    const std::string p = SqlDialectName(set);
    auto store = internal::MakeMariaDbHookStore(WithSet(db, set));
    ASSERT_TRUE(store->CommitCommand(Request(p + "-warm", p + "-warm", 3), {}));
    internal::CommitWrite unleased;
    const internal::CommitRequest for_relay = Request(p + "-relay", p + "-relay", 3, "");
    EXPECT_EQ(StatementsOf(*store, for_relay, unleased), 4u) << p;
    EXPECT_EQ(db.Scalar("SELECT COUNT(*) FROM room_outbox WHERE command_id = '" + p +
                        "-relay' AND claim_token IS NULL"),
              3)
        << p;
    if (set == SqlDialect::kMySql) {
      EXPECT_TRUE(unleased.row_ids.empty());
      EXPECT_EQ(unleased.server_now_ms, 0);
    } else {
      ExpectIdsOf(db, for_relay, unleased, p);
    }
    internal::CommitWrite leased;
    const internal::CommitRequest for_sync = Request(p + "-sync", p + "-sync", 3);
    EXPECT_EQ(StatementsOf(*store, for_sync, leased), set == SqlDialect::kMySql ? 5u : 4u) << p;
    ExpectIdsOf(db, for_sync, leased, p);
    EXPECT_GT(leased.server_now_ms, 0) << p;
  }
}

// Whether an EXPLAIN Extra says the table is read from the index alone: "Using index" as one of its
// "; "-separated items ("Using index condition" reads the row too).
bool IndexOnly(const std::string& extra) {
  for (size_t at = 0; at <= extra.size();) {
    const size_t end = std::min(extra.find("; ", at), extra.size());
    if (extra.compare(at, end - at, "Using index") == 0) return true;
    at = end + 2;
  }
  return false;
}

// The MySQL set's read-back, with and without the per-room check, reads the command's rows from
// idx_command_id (command_id, id, event_id; schema 008) alone, no primary-key lookup per row, and
// the check from idx_room_status alone; nothing is sorted.
TEST(DialectSetsTest, TheReadBackReadsTheCommandsRowsFromTheIndexAlone) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  auto store = internal::MakeMariaDbHookStore(WithSet(db, SqlDialect::kMySql));
  for (int c = 0; c < 50; ++c) {
    const std::string id = "c" + std::to_string(c);
    ASSERT_TRUE(store->CommitCommand(Request(id, "room-" + std::to_string(c % 7), 3), {}));
  }
  db.Exec("ANALYZE TABLE room_outbox, room_command_log");
  const std::string plain = WithLiterals(core::sql::kCommitReadBack, {"'c17'"});
  const std::string checked =
      WithLiterals(core::sql::kCommitReadBackChecked, {"'room-3'", "'c17'", "'c17'"});
  for (const std::string& sql : {plain, checked}) {
    SCOPED_TRACE(sql);
    ASSERT_EQ(db.Query(sql).size(), 3u);
    bool outbox_rows_seen = false;
    bool check_seen = false;
    // EXPLAIN columns: id, select_type, table, type, possible_keys, key, key_len, ref, rows, Extra.
    for (const auto& row : db.Query("EXPLAIN " + sql)) {
      const std::string table = row[2].value_or("");
      const std::string extra = row[9].value_or("");
      EXPECT_NE(row[3].value_or(""), "ALL") << "a full scan of " << table;
      EXPECT_EQ(extra.find("filesort"), std::string::npos) << table << ": " << extra;
      EXPECT_EQ(extra.find("temporary"), std::string::npos) << table << ": " << extra;
      if (table == "o" || table == "e") {
        (table == "o" ? outbox_rows_seen : check_seen) = true;
        EXPECT_EQ(row[5].value_or(""), table == "o" ? "idx_command_id" : "idx_room_status");
        EXPECT_TRUE(IndexOnly(extra)) << table << ": " << extra;
      }
    }
    EXPECT_TRUE(outbox_rows_seen) << "no plan row for the command's rows";
    EXPECT_EQ(check_seen, sql == checked) << "a plan row for the per-room check";
  }
}

// A database not yet migrated to 008 (idx_command_id on command_id alone, as schema 002 made it)
// takes the same statements: both sets commit and read the same ids, leased or not.
TEST(DialectSetsTest, BothSetsCommitOnASchemaBefore008) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  db.Exec(
      "ALTER TABLE room_outbox DROP INDEX idx_command_id, ADD INDEX idx_command_id (command_id)");
  db.Exec("DELETE FROM room_outbox_schema_version WHERE version >= 8");
  for (SqlDialect set : kSets) {
    const std::string p = SqlDialectName(set);
    auto store = internal::MakeMariaDbHookStore(WithSet(db, set));
    for (const std::string token : {"tok-hook", ""}) {
      const internal::CommitRequest request = Request(p + "-7" + token, p, 3, token);
      auto write = store->CommitCommand(request, {});
      ASSERT_TRUE(write) << p << ": " << write.error().message;
      ASSERT_EQ(write->outcome, internal::CommitOutcome::kCommitted) << p;
      if (!token.empty() || set == SqlDialect::kMariaDb) {
        ExpectIdsOf(db, request, *write, p + " " + token);
      }
      EXPECT_EQ(db.Scalar("SELECT COUNT(*) FROM room_outbox WHERE command_id = '" +
                          request.command.command_id + "'"),
                3)
          << p;
    }
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
