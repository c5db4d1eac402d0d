// The schema as migrated from schema/*.sql: constraints and the indexes the relay relies on.
#include <gtest/gtest.h>

#include "support/test_database.h"

namespace room_outbox::testing {
namespace {

TEST(SchemaTest, EventIdAndCommandIdAreUnique) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  EXPECT_EQ(db.Scalar("SELECT COUNT(*) FROM information_schema.statistics WHERE table_schema='" +
                      db.name() +
                      "' AND table_name='room_outbox' AND index_name='uk_event_id' AND "
                      "non_unique=0"),
            1);
  EXPECT_EQ(db.Scalar("SELECT COUNT(*) FROM information_schema.statistics WHERE table_schema='" +
                      db.name() +
                      "' AND table_name='room_command_log' AND index_name='uk_command_id' AND "
                      "non_unique=0"),
            1);
}

TEST(SchemaTest, TablesAreInnoDbUtf8mb4) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  auto rows = db.Query(
      "SELECT table_name, engine, table_collation FROM information_schema.tables "
      "WHERE table_schema='" +
      db.name() + "' ORDER BY table_name");
  // the command log, the outbox, the schema's version table, the IM budget's members, the room
  // schedule, the relays' runs
  ASSERT_EQ(rows.size(), 6u);
  for (const auto& row : rows) {
    EXPECT_EQ(*row[1], "InnoDB") << *row[0];
    EXPECT_EQ(row[2]->rfind("utf8mb4", 0), 0u) << *row[0];
  }
}

TEST(SchemaTest, MigratingTwiceIsHarmless) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  db.Exec(
      "INSERT INTO room_outbox (event_id, event_type, room_id, command_id, envelope, "
      "created_at_ms, updated_at_ms) VALUES ('e1','T','r','c','{}',1,1)");
  db.ApplySchema();  // a second migration must neither fail nor touch the data
  EXPECT_EQ(db.Scalar("SELECT COUNT(*) FROM room_outbox"), 1);
  EXPECT_EQ(db.Scalar("SELECT COUNT(*) FROM information_schema.tables WHERE table_schema='" +
                      db.name() + "'"),
            6);
}

TEST(SchemaTest, PendingScanUsesThePendingIndex) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  auto rows = db.Query(
      "EXPLAIN SELECT id FROM room_outbox WHERE status='pending' AND next_attempt_at_ms <= 5 "
      "ORDER BY next_attempt_at_ms, id LIMIT 100");
  ASSERT_FALSE(rows.empty());
  // EXPLAIN columns: id, select_type, table, type, possible_keys, key, key_len, ref, rows, Extra
  ASSERT_TRUE(rows[0][5].has_value());
  EXPECT_EQ(*rows[0][5], "idx_pending_due");
  std::string extra = rows[0][9].value_or("");
  EXPECT_EQ(extra.find("filesort"), std::string::npos) << extra;
}

}  // namespace
}  // namespace room_outbox::testing
