// Transaction::ExecuteAffected against the test MariaDB: the rows a caller statement matched,
// counted as found rows (CLIENT_FOUND_ROWS), so the optimistic check of a room snapshot
// (`UPDATE ... WHERE room_id = ? AND room_seq = ?`) tells a command that won from one that lost
// the race, and a lost race rolls the whole command back.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "store/mariadb_hook_store.h"
#include "support/test_database.h"

namespace room_outbox::testing {
namespace {

internal::CommitRequest Request(const std::string& command_id, const std::string& room) {
  internal::CommitRequest request;
  request.command.command_id = command_id;
  request.command.room_id = room;
  request.command.command_type = "SendGift";
  request.command.request_id = "req-" + command_id;
  request.command.room_seq = 8;
  internal::NewOutboxRow row;
  row.event_id = command_id + "-e0";
  row.event_type = "RoomGiftSent";
  row.room_id = room;
  row.command_id = command_id;
  row.request_id = request.command.request_id;
  row.envelope = R"({"event_id":")" + row.event_id + R"("})";
  request.rows.push_back(row);
  return request;
}

// A snapshot table with room-1 at room_seq 7 and room-2 at 3.
TestDatabase& WithSnapshot(TestDatabase& db) {
  db.Exec(
      "CREATE TABLE snapshot (room_id VARCHAR(64) PRIMARY KEY, room_seq BIGINT NOT NULL, "
      "heat BIGINT NOT NULL)");
  db.Exec("INSERT INTO snapshot VALUES ('room-1', 7, 10), ('room-2', 3, 0)");
  return db;
}

constexpr const char* kAdvance =
    "UPDATE snapshot SET room_seq = ?, heat = ? WHERE room_id = ? AND room_seq = ?";

TEST(CommitAffectedRowsTest, CountsFoundRowsForEachKindOfStatement) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  WithSnapshot(db);
  auto store = internal::MakeMariaDbHookStore(db.Options());
  std::vector<uint64_t> seen;
  auto write = store->CommitCommand(Request("c1", "room-1"), [&](Transaction& tx) -> Status {
    auto run = [&](std::string_view sql, const std::vector<SqlValue>& params) {
      uint64_t n = 99;
      Status s = tx.ExecuteAffected(sql, params, &n);
      seen.push_back(s.ok() ? n : 1000);
      return s;
    };
    // The version matches and the values change: 1.
    (void)run(kAdvance, {int64_t{8}, int64_t{11}, std::string("room-1"), int64_t{7}});
    // The version matches and the values are already those: still 1 (found, not changed).
    (void)run(kAdvance, {int64_t{8}, int64_t{11}, std::string("room-1"), int64_t{8}});
    // Another version: the WHERE finds nothing, 0.
    (void)run(kAdvance, {int64_t{9}, int64_t{12}, std::string("room-1"), int64_t{7}});
    (void)run("INSERT INTO snapshot VALUES (?, 1, 0), (?, 1, 0)",
              {std::string("room-3"), std::string("room-4")});
    (void)run("SELECT room_id FROM snapshot WHERE room_seq = ?", {int64_t{1}});
    (void)run("SELECT room_id FROM snapshot WHERE room_seq = ?", {int64_t{100}});
    (void)run("DELETE FROM snapshot WHERE room_seq = ?", {int64_t{1}});
    // Execute without a count still runs.
    return tx.ExecuteAffected("UPDATE snapshot SET heat = heat + 1 WHERE room_id = ?",
                              {std::string("room-2")}, nullptr);
  });
  ASSERT_TRUE(write) << write.error().message;
  EXPECT_EQ(seen, (std::vector<uint64_t>{1, 1, 0, 2, 2, 0, 2}));
  EXPECT_EQ(db.Scalar("SELECT room_seq FROM snapshot WHERE room_id = 'room-1'"), 8);
  EXPECT_EQ(db.Scalar("SELECT heat FROM snapshot WHERE room_id = 'room-2'"), 1);
  EXPECT_EQ(db.Scalar("SELECT COUNT(*) FROM snapshot"), 2);
}

TEST(CommitAffectedRowsTest, ALostRaceRollsTheCommandBack) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  WithSnapshot(db);
  auto store = internal::MakeMariaDbHookStore(db.Options());
  // The room service expected room-1 at 6, but another command already moved it to 7.
  uint64_t matched = 99;
  auto write = store->CommitCommand(Request("c-late", "room-1"), [&](Transaction& tx) -> Status {
    Status s = tx.ExecuteAffected(
        kAdvance, {int64_t{7}, int64_t{50}, std::string("room-1"), int64_t{6}}, &matched);
    if (!s.ok()) {
      return s;
    }
    if (matched != 1) {
      return Error{ErrorCode::kAborted, "room-1 is not at room_seq 6: lost the race"};
    }
    return Status();
  });
  ASSERT_FALSE(write);
  EXPECT_EQ(matched, 0u);
  EXPECT_EQ(write.error().code, ErrorCode::kAborted) << write.error().message;
  EXPECT_EQ(db.Scalar("SELECT COUNT(*) FROM room_command_log"), 0);
  EXPECT_EQ(db.Scalar("SELECT COUNT(*) FROM room_outbox"), 0);
  EXPECT_EQ(db.Scalar("SELECT heat FROM snapshot WHERE room_id = 'room-1'"), 10);
}

TEST(CommitAffectedRowsTest, AFailedStatementCountsZero) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  auto store = internal::MakeMariaDbHookStore(db.Options());
  uint64_t n = 99;
  auto write = store->CommitCommand(Request("c1", "room-1"), [&](Transaction& tx) {
    return tx.ExecuteAffected("UPDATE no_such_table SET x = ?", {int64_t{1}}, &n);
  });
  ASSERT_FALSE(write);
  EXPECT_EQ(n, 0u);
  EXPECT_NE(write.error().message.find("no_such_table"), std::string::npos)
      << write.error().message;
}

// A Transaction written outside the hook (a test fake) that does not implement the count is
// refused clearly instead of reporting a count it does not have.
TEST(CommitAffectedRowsTest, AnotherTransactionWithoutTheCountRefuses) {
  struct ExecuteOnly : Transaction {
    Status Execute(std::string_view, const std::vector<SqlValue>&) override { return Status(); }
  } tx;
  uint64_t n = 99;
  Status s = tx.ExecuteAffected("UPDATE t SET x = 1", {}, &n);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(n, 0u);
}

}  // namespace
}  // namespace room_outbox::testing
