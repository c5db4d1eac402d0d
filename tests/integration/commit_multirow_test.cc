// The commit's multi-row outbox insert (outbox_insert.h) and the per-room check folded into the
// command log insert, against the test MariaDB: ids in event order whatever the row count and
// the AUTO_INCREMENT step, mixed published and pending rows in one statement, chunks that fail
// roll everything back, and a check that never waits for a claim's locks.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "core/mysql/connection.h"
#include "store/mariadb_hook_store.h"
#include "store/outbox_insert.h"
#include "support/test_database.h"

namespace room_outbox::testing {
namespace {

internal::CommitRequest Request(const std::string& command_id, const std::string& room,
                                size_t events, const std::string& token = "tok-hook") {
  internal::CommitRequest request;
  request.command.command_id = command_id;
  request.command.room_id = room;
  request.command.command_type = "SendGift";
  request.command.request_id = "req-" + command_id;
  request.command.room_seq = 7;
  request.command.payload = "{}";
  request.token = token;
  request.sync_lease = std::chrono::milliseconds(token.empty() ? 0 : 800);
  for (size_t i = 0; i < events; ++i) {
    const std::string event_id = command_id + "-e" + std::to_string(i);
    request.rows.push_back(internal::NewOutboxRow{event_id, "RoomGiftSent", room, command_id,
                                                  request.command.request_id,
                                                  R"({"event_id":")" + event_id + R"("})", false});
  }
  return request;
}

// Every row of the command as (id, event_id, envelope), in id order.
std::vector<TestDatabase::Row> RowsOf(TestDatabase& db, const std::string& command_id) {
  return db.Query("SELECT id, event_id, envelope FROM room_outbox WHERE command_id = '" +
                  command_id + "' ORDER BY id");
}

// The returned ids name the rows of the request, in its order, and nothing else.
void ExpectIdsMatchRows(TestDatabase& db, const internal::CommitRequest& request,
                        const std::vector<int64_t>& ids) {
  const auto rows = RowsOf(db, request.command.command_id);
  ASSERT_EQ(ids.size(), request.rows.size());
  ASSERT_EQ(rows.size(), request.rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(*rows[i][0], std::to_string(ids[i])) << "row " << i;
    EXPECT_EQ(*rows[i][1], request.rows[i].event_id) << "row " << i;
    EXPECT_EQ(*rows[i][2], request.rows[i].envelope) << "row " << i;
  }
}

TEST(CommitMultiRowTest, IdsComeBackInEventOrderForOneTwoAndManyRows) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  auto store = internal::MakeMariaDbHookStore(db.Options());
  // 16 fill one statement, 17 and 40 need more than one.
  for (size_t events : {1u, 2u, 3u, 16u, 17u, 40u}) {
    const internal::CommitRequest request = Request("c" + std::to_string(events), "room-1", events);
    auto write = store->CommitCommand(request, {});
    ASSERT_TRUE(write) << write.error().message;
    ASSERT_EQ(write->outcome, internal::CommitOutcome::kCommitted);
    ExpectIdsMatchRows(db, request, write->row_ids);
  }
  EXPECT_EQ(db.Scalar("SELECT COUNT(*) FROM room_outbox"), 1 + 2 + 3 + 16 + 17 + 40);
}

TEST(CommitMultiRowTest, ACommandWithoutEventsWritesItsLogRowOnly) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  auto store = internal::MakeMariaDbHookStore(db.Options());
  auto write = store->CommitCommand(Request("c0", "room-1", 0), {});
  ASSERT_TRUE(write) << write.error().message;
  EXPECT_EQ(write->outcome, internal::CommitOutcome::kCommitted);
  EXPECT_TRUE(write->row_ids.empty());
  EXPECT_EQ(db.Scalar("SELECT COUNT(*) FROM room_command_log"), 1);
  EXPECT_EQ(db.Scalar("SELECT COUNT(*) FROM room_outbox"), 0);
}

TEST(CommitMultiRowTest, MixedPublishedAndPendingRowsInOneStatement) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  auto store = internal::MakeMariaDbHookStore(db.Options());
  internal::CommitRequest request = Request("c1", "room-1", 5);
  request.rows[0].published = true;
  request.rows[3].published = true;
  auto write = store->CommitCommand(request, {});
  ASSERT_TRUE(write) << write.error().message;
  ExpectIdsMatchRows(db, request, write->row_ids);

  const auto rows = db.Query(
      "SELECT status, claim_token, next_attempt_at_ms - created_at_ms, "
      "published_at_ms - created_at_ms, updated_at_ms - created_at_ms, retry_count "
      "FROM room_outbox ORDER BY id");
  ASSERT_EQ(rows.size(), 5u);
  for (size_t i = 0; i < rows.size(); ++i) {
    const bool published = request.rows[i].published;
    EXPECT_EQ(*rows[i][0], published ? "published" : "pending") << "row " << i;
    if (published) {
      EXPECT_FALSE(rows[i][1].has_value()) << "row " << i;  // nobody holds it
      EXPECT_EQ(*rows[i][2], "0") << "row " << i;
      ASSERT_TRUE(rows[i][3].has_value()) << "row " << i;
      EXPECT_EQ(*rows[i][3], "0") << "row " << i;  // published in the commit itself
    } else {
      EXPECT_EQ(rows[i][1].value_or("NULL"), "tok-hook") << "row " << i;
      EXPECT_EQ(*rows[i][2], "800") << "row " << i;  // the lease, on the server's clock
      EXPECT_FALSE(rows[i][3].has_value()) << "row " << i;
    }
    EXPECT_EQ(*rows[i][4], "0") << "row " << i;
    EXPECT_EQ(*rows[i][5], "0") << "row " << i;
  }
}

TEST(CommitMultiRowTest, UnleasedRowsAreDueAtOnceWithoutAToken) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  auto store = internal::MakeMariaDbHookStore(db.Options());
  internal::CommitRequest request = Request("c1", "room-1", 3, "");
  request.rows[1].published = true;
  auto write = store->CommitCommand(request, {});
  ASSERT_TRUE(write) << write.error().message;
  EXPECT_EQ(db.Scalar("SELECT COUNT(*) FROM room_outbox WHERE claim_token IS NULL AND "
                      "next_attempt_at_ms = created_at_ms"),
            3);
  EXPECT_EQ(db.Scalar("SELECT COUNT(*) FROM room_outbox WHERE status = 'pending'"), 2);
}

TEST(CommitMultiRowTest, LargeRowsAreSplitIntoStatementsAndRoundTripByteExact) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  auto store = internal::MakeMariaDbHookStore(db.Options());
  internal::CommitRequest request = Request("c1", "room-1", 4);
  for (size_t i = 0; i < request.rows.size(); ++i) {
    // Each envelope alone is over half of kMaxBytesPerOutboxInsert: one row per statement.
    request.rows[i].envelope = R"({"pad":")" +
                               std::string(internal::kMaxBytesPerOutboxInsert / 2 + 1000, 'a' + i) +
                               R"("})";
  }
  ASSERT_EQ(internal::OutboxInsertChunk(request.rows), 1u);
  auto write = store->CommitCommand(request, {});
  ASSERT_TRUE(write) << write.error().message;
  ExpectIdsMatchRows(db, request, write->row_ids);
}

TEST(CommitMultiRowTest, IdsAreRightWhenTheAutoIncrementStepIsNotOne) {
  // A server whose auto_increment_increment is not 1 (e.g. multi-primary setups) gives a
  // multi-row INSERT ids that are not consecutive; the ids are read back, not computed. The
  // step is set for one non-root user only (init_connect does not apply to root, which the
  // other tests use), and restored.
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  const std::string user = "outbox_step_" + std::to_string(::getpid());
  db.Exec("CREATE USER '" + user + "'@'localhost' IDENTIFIED BY 'step-pw'");
  db.Exec("GRANT ALL ON `" + db.name() + "`.* TO '" + user + "'@'localhost'");
  const auto saved = db.Query("SELECT @@GLOBAL.init_connect");
  db.Exec("SET GLOBAL init_connect = 'SET SESSION auto_increment_increment = 7'");
  MysqlOptions options = db.Options();
  options.user = user;
  options.password = "step-pw";
  auto store = internal::MakeMariaDbHookStore(options);
  const internal::CommitRequest request = Request("c1", "room-1", 5);
  auto write = store->CommitCommand(request, {});
  store.reset();
  db.Exec("SET GLOBAL init_connect = '" + saved.at(0)[0].value_or("") + "'");
  db.Exec("DROP USER '" + user + "'@'localhost'");

  ASSERT_TRUE(write) << write.error().message;
  ASSERT_EQ(write->row_ids.size(), 5u);
  EXPECT_EQ(write->row_ids[1] - write->row_ids[0], 7);  // the step really applied
  ExpectIdsMatchRows(db, request, write->row_ids);
}

TEST(CommitMultiRowTest, AFailingLaterChunkRollsBackTheWholeCommand) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  db.Exec("CREATE TABLE snapshot (room_id VARCHAR(64) PRIMARY KEY, seq BIGINT NOT NULL)");
  auto store = internal::MakeMariaDbHookStore(db.Options());
  ASSERT_TRUE(store->CommitCommand(Request("c0", "room-1", 1), {}));
  internal::CommitRequest request = Request("c1", "room-1", 30);
  request.rows[20].event_id = "c0-e0";  // taken: the second statement fails on uk_event_id
  auto write = store->CommitCommand(request, [](Transaction& tx) {
    return tx.Execute("INSERT INTO snapshot VALUES (?, ?)", {std::string("room-1"), int64_t{7}});
  });
  ASSERT_FALSE(write);
  EXPECT_EQ(write.error().code, ErrorCode::kAlreadyExists) << write.error().message;
  EXPECT_NE(write.error().message.find("insert_outbox_rows"), std::string::npos)
      << write.error().message;
  EXPECT_EQ(db.Scalar("SELECT COUNT(*) FROM room_command_log WHERE command_id = 'c1'"), 0);
  EXPECT_EQ(db.Scalar("SELECT COUNT(*) FROM room_outbox WHERE command_id = 'c1'"), 0);
  EXPECT_EQ(db.Scalar("SELECT COUNT(*) FROM snapshot"), 0);
  // The connection is fine for the next command.
  ASSERT_TRUE(store->CommitCommand(Request("c2", "room-1", 2), {}));
}

TEST(CommitMultiRowTest, ARepeatedCommandWritesNothingAndRunsNoCallerStatement) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  auto store = internal::MakeMariaDbHookStore(db.Options());
  ASSERT_TRUE(store->CommitCommand(Request("c1", "room-1", 20), {}));
  for (const std::string token : {"tok-hook", ""}) {  // checked and unchecked log insert
    internal::CommitRequest repeat = Request("c1", "room-1", 20, token);
    for (auto& row : repeat.rows) {
      row.event_id += "-again";
    }
    bool caller_ran = false;
    auto write = store->CommitCommand(repeat, [&](Transaction&) {
      caller_ran = true;
      return Status();
    });
    ASSERT_TRUE(write) << write.error().message;
    EXPECT_EQ(write->outcome, internal::CommitOutcome::kDuplicate);
    EXPECT_TRUE(write->row_ids.empty());
    EXPECT_FALSE(caller_ran);
  }
  EXPECT_EQ(db.Scalar("SELECT COUNT(*) FROM room_outbox"), 20);
}

TEST(CommitMultiRowTest, EarlierPendingIsReadForLeasedRowsOnly) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  auto store = internal::MakeMariaDbHookStore(db.Options());
  ASSERT_TRUE(store->CommitCommand(Request("c1", "room-1", 1, ""), {}));
  auto leased = store->CommitCommand(Request("c2", "room-1", 1), {});
  ASSERT_TRUE(leased) << leased.error().message;
  EXPECT_TRUE(leased->earlier_pending);
  // Rows left to the relay: nobody publishes them ahead of it, the check is not made.
  auto unleased = store->CommitCommand(Request("c3", "room-1", 1, ""), {});
  ASSERT_TRUE(unleased) << unleased.error().message;
  EXPECT_FALSE(unleased->earlier_pending);
}

TEST(CommitMultiRowTest, TheRoomCheckDoesNotWaitForAClaimHoldingTheRoomsRows) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  auto store = internal::MakeMariaDbHookStore(db.Options());
  ASSERT_TRUE(store->CommitCommand(Request("c1", "room-1", 2, ""), {}));
  // A relay's claim holds the room's pending rows (FOR UPDATE) while the next command commits.
  db.Exec("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED");
  db.Exec("BEGIN");
  ASSERT_EQ(db.Query("SELECT id FROM room_outbox WHERE room_id = 'room-1' AND "
                     "status = 'pending' FOR UPDATE")
                .size(),
            2u);
  // A locking read would wait out the store's innodb_lock_wait_timeout and fail kAborted.
  auto write = store->CommitCommand(Request("c2", "room-1", 1), {});
  db.Exec("ROLLBACK");
  ASSERT_TRUE(write) << write.error().message;
  EXPECT_TRUE(write->earlier_pending);
}

TEST(CommitMultiRowTest, CallerStatementsArePreparedOnceAndReusedAcrossCommits) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  auto conn = core::MariaDbConnection::Connect(db.Options());
  ASSERT_TRUE(conn) << conn.error().message;
  auto first = (*conn)->PreparedCallerStatement("SELECT ?");
  auto again = (*conn)->PreparedCallerStatement("SELECT ?");
  auto other = (*conn)->PreparedCallerStatement("SELECT ? + 1");
  ASSERT_TRUE(first && again && other);
  EXPECT_EQ(*first, *again);
  EXPECT_NE(*first, *other);
  // Past the bound the cache starts over; every text still works.
  for (size_t i = 0; i < core::MariaDbConnection::kMaxCallerStatements + 5; ++i) {
    auto stmt = (*conn)->PreparedCallerStatement("SELECT " + std::to_string(i) + " + ?");
    ASSERT_TRUE(stmt) << stmt.error().message;
    const std::vector<core::SqlValue> params = {int64_t{1}};
    ASSERT_TRUE((*stmt)->Execute(params));
    auto rows = (*stmt)->FetchAll();
    ASSERT_TRUE(rows);
    ASSERT_EQ(rows->size(), 1u);
    EXPECT_EQ((*rows)[0].Int(0).value_or(-1), static_cast<int64_t>(i) + 1);
  }

  // The store runs the same caller text in every commit: each commit writes its own row.
  db.Exec("CREATE TABLE snapshot (room_id VARCHAR(64) NOT NULL, seq BIGINT NOT NULL)");
  auto store = internal::MakeMariaDbHookStore(db.Options());
  for (int64_t seq = 1; seq <= 3; ++seq) {
    auto write = store->CommitCommand(
        Request("c" + std::to_string(seq), "room-1", 1), [seq](Transaction& tx) {
          return tx.Execute("INSERT INTO snapshot VALUES (?, ?)", {std::string("room-1"), seq});
        });
    ASSERT_TRUE(write) << write.error().message;
  }
  EXPECT_EQ(db.Scalar("SELECT SUM(seq) FROM snapshot"), 6);
}

TEST(CommitMultiRowTest, ChunksHoldAtMostSixteenRowsAndALargeRowGoesAlone) {
  std::vector<internal::NewOutboxRow> rows(40);
  for (auto& row : rows) {
    row.event_id = "e";
    row.envelope = "{}";
  }
  EXPECT_EQ(internal::OutboxInsertChunk(rows), internal::kMaxRowsPerOutboxInsert);
  EXPECT_EQ(internal::OutboxInsertChunk(std::span(rows).first(5)), 5u);
  EXPECT_EQ(internal::OutboxInsertChunk(std::span(rows).first(0)), 0u);
  rows[2].envelope = std::string(internal::kMaxBytesPerOutboxInsert, 'x');
  EXPECT_EQ(internal::OutboxInsertChunk(rows), 2u);  // stops before the row that does not fit
  EXPECT_EQ(internal::OutboxInsertChunk(std::span(rows).subspan(2)), 1u);  // alone when too big
  EXPECT_EQ(internal::OutboxInsertChunk(std::span(rows).subspan(3)),
            internal::kMaxRowsPerOutboxInsert);
}

}  // namespace
}  // namespace room_outbox::testing
