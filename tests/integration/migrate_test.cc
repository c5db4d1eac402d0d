// outbox-relay migrate against the test MariaDB (in the MySQL set too: the suite's second run):
// a fresh database gets every step, a second run applies nothing, the schema files applied by
// hand give the same schema, a database migrated by hand before the version table existed (or
// half way through a step) is recognised and completed, a newer one is refused, --dry-run changes
// nothing, outbox-relay and its operator commands refuse a schema older than they need, and the
// room schedule's step (009) applies to a database with a pending backlog, which the relay then
// drains.
#include "migrate/migrate.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/mysql/outbox_sql.h"
#include "support/fake_im_server.h"
#include "support/mysql_admin.h"
#include "support/relay_command.h"
#include "support/relay_process.h"
#include "support/test_database.h"

namespace room_outbox::testing {
namespace {

using ::testing::HasSubstr;

class MigrateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(db_.valid());
    relay_ = std::make_unique<RelayProcess>(db_, im_);
  }

  CommandResult Relay(std::vector<std::string> args) {
    args.push_back("--config");
    args.push_back(relay_->config_path());
    return RunRelayCommand(args);
  }

  // Every column and index of the database, one line each, for comparing two schemas.
  std::string SchemaOf(TestDatabase& db) {
    std::string out;
    for (const auto& row : db.Query("SELECT table_name, column_name, column_type, is_nullable, "
                                    "COALESCE(column_default, '-') FROM information_schema.columns "
                                    "WHERE table_schema = '" +
                                    db.name() + "' ORDER BY table_name, ordinal_position")) {
      out += "column " + *row[0] + "." + *row[1] + " " + *row[2] + " " + *row[3] + " " + *row[4] +
             "\n";
    }
    for (const auto& row :
         db.Query("SELECT table_name, index_name, seq_in_index, column_name, non_unique FROM "
                  "information_schema.statistics WHERE table_schema = '" +
                  db.name() + "' ORDER BY table_name, index_name, seq_in_index")) {
      out +=
          "index " + *row[0] + "." + *row[1] + " " + *row[2] + " " + *row[3] + " " + *row[4] + "\n";
    }
    return out;
  }

  std::vector<int64_t> Recorded() {
    std::vector<int64_t> out;
    for (const auto& row :
         db_.Query("SELECT version FROM room_outbox_schema_version ORDER BY version")) {
      out.push_back(std::stoll(*row[0]));
    }
    return out;
  }

  TestDatabase db_;
  FakeImServer im_;
  std::unique_ptr<RelayProcess> relay_;
};

const std::vector<int64_t> kAllVersions = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};

TEST_F(MigrateTest, AFreshDatabaseRecordsEveryStepAndASecondRunAppliesNothing) {
  EXPECT_EQ(Recorded(), kAllVersions);  // TestDatabase migrated it with the same code
  CommandResult again = Relay({"migrate"});
  ASSERT_EQ(again.exit_code, 0) << again.Describe();
  EXPECT_EQ(again.Json()["from_version"], 11) << again.Describe();
  EXPECT_EQ(again.Json()["to_version"], 11);
  EXPECT_TRUE(again.Json()["steps"].empty()) << again.Describe();
  EXPECT_EQ(Recorded(), kAllVersions);
}

TEST_F(MigrateTest, TheFilesAppliedByHandInOrderGiveTheMigratedSchema) {
  TestDatabase by_hand;
  ASSERT_TRUE(by_hand.valid());
  by_hand.Exec(
      "DROP TABLE room_outbox, room_command_log, room_outbox_schema_version, "
      "room_outbox_im_member, room_outbox_room, room_outbox_relay_run");
  for (const auto& file : SchemaFiles()) {
    std::ifstream in(file);
    std::stringstream text;
    text << in.rdbuf();
    by_hand.Exec(text.str());  // as a client runs a file: every statement once, in order
  }
  EXPECT_EQ(SchemaOf(by_hand), SchemaOf(db_));
  EXPECT_EQ(by_hand.Scalar("SELECT COUNT(*) FROM room_outbox_schema_version"), 12);
}

TEST_F(MigrateTest, ADatabaseMigratedByHandBeforeTheVersionTableIsRecognised) {
  const std::string migrated = SchemaOf(db_);
  db_.Exec(
      "INSERT INTO room_outbox (event_id, event_type, room_id, command_id, envelope, "
      "created_at_ms, updated_at_ms) VALUES ('e1', 'T', 'r', 'c', '{}', 1, 1)");
  // Every file of the earlier releases applied, but no version table.
  db_.Exec("DROP TABLE room_outbox_schema_version");
  CommandResult relay = Relay({"--once"});
  EXPECT_EQ(relay.exit_code, 2) << relay.Describe();
  EXPECT_THAT(relay.err, HasSubstr("outbox-relay migrate")) << relay.Describe();

  CommandResult run = Relay({"migrate"});
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  const auto steps = run.Json()["steps"];
  ASSERT_EQ(steps.size(), 12u) << run.Describe();
  EXPECT_TRUE(run.Json()["from_version"].is_null());
  EXPECT_EQ(steps[3]["name"], "003_parked");
  EXPECT_EQ(steps[3]["already_applied"], 3) << run.Describe();  // a column and two indexes
  EXPECT_EQ(steps[4]["already_applied"], 1) << run.Describe();
  EXPECT_EQ(Recorded(), kAllVersions);
  EXPECT_EQ(SchemaOf(db_), migrated);
  EXPECT_EQ(db_.Scalar("SELECT COUNT(*) FROM room_outbox"), 1);
}

TEST_F(MigrateTest, AStepAppliedHalfWayIsCompleted) {
  const std::string migrated = SchemaOf(db_);
  // 003 stopped after its column (as its IF NOT EXISTS form did on MySQL); 004 never ran.
  db_.Exec("ALTER TABLE room_outbox DROP INDEX idx_status_published");
  db_.Exec("ALTER TABLE room_command_log DROP INDEX idx_created_at");
  db_.Exec("ALTER TABLE room_outbox DROP COLUMN drop_count");
  db_.Exec("DELETE FROM room_outbox_schema_version WHERE version >= 3");
  CommandResult run = Relay({"migrate"});
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  ASSERT_EQ(run.Json()["steps"].size(), 9u) << run.Describe();
  EXPECT_EQ(run.Json()["steps"][0]["already_applied"], 1) << run.Describe();
  EXPECT_EQ(run.Json()["from_version"], 2);
  EXPECT_EQ(SchemaOf(db_), migrated);
  EXPECT_EQ(Recorded(), kAllVersions);
}

TEST_F(MigrateTest, DryRunListsTheMissingStepsAndChangesNothing) {
  db_.Exec("ALTER TABLE room_outbox DROP COLUMN drop_count");
  db_.Exec("DROP TABLE room_outbox_im_member");
  db_.Exec("DELETE FROM room_outbox_schema_version WHERE version >= 4");
  const std::string before = SchemaOf(db_);
  CommandResult dry = Relay({"migrate", "--dry-run"});
  ASSERT_EQ(dry.exit_code, 0) << dry.Describe();
  EXPECT_EQ(dry.Json()["dry_run"], true);
  ASSERT_EQ(dry.Json()["steps"].size(), 8u) << dry.Describe();
  EXPECT_EQ(dry.Json()["steps"][0]["version"], 4);
  ASSERT_EQ(dry.Json()["steps"][0]["sql"].size(), 2u) << dry.Describe();
  EXPECT_THAT(dry.Json()["steps"][0]["sql"][0].get<std::string>(),
              HasSubstr("ADD COLUMN drop_count"));
  EXPECT_EQ(SchemaOf(db_), before);
  EXPECT_EQ(Recorded(), (std::vector<int64_t>{0, 1, 2, 3}));
}

TEST_F(MigrateTest, ADatabaseNewerThanTheBinaryIsRefused) {
  db_.Exec("INSERT INTO room_outbox_schema_version VALUES (99, '099_future', 0)");
  CommandResult run = Relay({"migrate"});
  EXPECT_EQ(run.exit_code, 2) << run.Describe();
  EXPECT_THAT(run.Json()["error"].get<std::string>(), HasSubstr("version 99, newer than"));
  EXPECT_EQ(Recorded(), (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 99}));
}

TEST_F(MigrateTest, RelayAndOperatorCommandsRefuseAnOlderSchemaUntilMigrated) {
  db_.Exec("ALTER TABLE room_outbox DROP COLUMN drop_count");
  db_.Exec("DROP TABLE room_outbox_im_member");
  db_.Exec("DELETE FROM room_outbox_schema_version WHERE version >= 4");
  CommandResult once = Relay({"--once"});
  EXPECT_EQ(once.exit_code, 2) << once.Describe();
  EXPECT_THAT(once.err,
              HasSubstr("schema is version 3, older than the 11 this outbox-relay needs"));
  EXPECT_THAT(once.err, HasSubstr("run `outbox-relay migrate`"));
  CommandResult stats = Relay({"stats"});
  EXPECT_EQ(stats.exit_code, 2) << stats.Describe();
  EXPECT_THAT(stats.err, HasSubstr("outbox-relay migrate"));

  ASSERT_EQ(Relay({"migrate"}).exit_code, 0);
  CommandResult after = Relay({"stats", "--window", "1s"});
  EXPECT_EQ(after.exit_code, 0) << after.Describe();
  CommandResult drained = Relay({"--once"});
  EXPECT_EQ(drained.exit_code, 0) << drained.Describe();
}

// Schema 009 (the room schedule), 010 (the relays' runs) and 011 (the attempt history) on a
// database at 008 with a pending backlog: the relay refuses to run until they are applied, migrate
// applies them (new tables, columns, online indexes), and the relay's first claims list the
// backlog and deliver it.
TEST_F(MigrateTest, TheRoomScheduleStepAppliesUnderABacklogThatTheRelayThenDrains) {
  const std::string migrated = SchemaOf(db_);
  db_.Exec("DROP TABLE room_outbox_room, room_outbox_relay_run");
  db_.Exec(
      "ALTER TABLE room_outbox DROP INDEX idx_unlisted, DROP INDEX idx_claim_token, "
      "DROP COLUMN room_listed, DROP COLUMN attempt_count, DROP COLUMN attempts");
  db_.Exec("DELETE FROM room_outbox_schema_version WHERE version >= 9");
  db_.Exec(
      "INSERT INTO room_outbox (event_id, event_type, room_id, command_id, envelope, "
      "created_at_ms, updated_at_ms) SELECT CONCAT('e', seq), 'RoomGiftSent', CONCAT('r', seq % "
      "7), "
      "CONCAT('c', seq), JSON_OBJECT('event_id', CONCAT('e', seq), 'event_type', 'RoomGiftSent', "
      "'room_id', CONCAT('r', seq % 7), 'room_seq', seq, 'command_id', CONCAT('c', seq), "
      "'request_id', '', 'node_id', 'n', 'occurred_at_ms', 1, 'payload', JSON_OBJECT()), 1, 1 "
      "FROM seq_1_to_50");
  CommandResult refused = Relay({"--once"});
  EXPECT_EQ(refused.exit_code, 2) << refused.Describe();

  CommandResult run = Relay({"migrate"});
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  EXPECT_EQ(run.Json()["from_version"], 8);
  EXPECT_EQ(run.Json()["to_version"], 11);
  ASSERT_EQ(run.Json()["steps"].size(), 3u) << run.Describe();
  EXPECT_EQ(run.Json()["steps"][0]["name"], "009_room_schedule");
  EXPECT_EQ(run.Json()["steps"][0]["already_applied"], 0);
  EXPECT_EQ(run.Json()["steps"][1]["name"], "010_relay_runs");
  EXPECT_EQ(run.Json()["steps"][2]["name"], "011_attempts");
  EXPECT_EQ(SchemaOf(db_), migrated);
  EXPECT_EQ(Recorded(), kAllVersions);

  CommandResult drained = Relay({"--once"});
  EXPECT_EQ(drained.exit_code, 0) << drained.Describe();
  EXPECT_EQ(db_.Scalar("SELECT COUNT(*) FROM room_outbox WHERE status = 'published'"), 50);
  EXPECT_EQ(db_.Scalar("SELECT COUNT(*) FROM room_outbox WHERE attempt_count = 1"), 50);
  EXPECT_EQ(db_.Scalar("SELECT COUNT(*) FROM room_outbox_room WHERE due_at_ms < " +
                       std::to_string(core::sql::kIdleRoomDueMs)),
            0)
      << "rooms without pending rows go idle";
}

// Schema 010 adds the relays' runs and idx_claim_token, which the relay needs (a killed relay's
// leases are found through them): a relay refuses schema 9, and migrate then applies 010 (and 011,
// whose columns are there already), online, to the same schema a fresh database gets.
TEST_F(MigrateTest, ARelayRefusesSchema9AndMigrateThenAddsTheRelayRuns) {
  const std::string migrated = SchemaOf(db_);
  db_.Exec("DROP TABLE room_outbox_relay_run");
  db_.Exec("ALTER TABLE room_outbox DROP INDEX idx_claim_token");
  db_.Exec("DELETE FROM room_outbox_schema_version WHERE version >= 10");
  CommandResult once = Relay({"--once"});
  EXPECT_EQ(once.exit_code, 2) << once.Describe();
  EXPECT_THAT(once.err,
              HasSubstr("schema is version 9, older than the 11 this outbox-relay needs"));

  CommandResult run = Relay({"migrate"});
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  EXPECT_EQ(run.Json()["from_version"], 9);
  EXPECT_EQ(run.Json()["to_version"], 11);
  ASSERT_EQ(run.Json()["steps"].size(), 2u) << run.Describe();
  EXPECT_EQ(run.Json()["steps"][0]["name"], "010_relay_runs");
  EXPECT_EQ(run.Json()["steps"][0]["already_applied"], 0);
  EXPECT_EQ(run.Json()["steps"][1]["name"], "011_attempts");
  EXPECT_EQ(run.Json()["steps"][1]["already_applied"], 1);  // one ALTER, its columns there
  EXPECT_EQ(SchemaOf(db_), migrated);
  EXPECT_EQ(Recorded(), kAllVersions);
  CommandResult after = Relay({"--once"});
  EXPECT_EQ(after.exit_code, 0) << after.Describe();
}

// Schema 011 adds the attempt history, which the relay's marks write: a relay refuses schema 10
// under a backlog, migrate adds the two columns online (the rows keep every other column), and
// the drain then records one attempt per row.
TEST_F(MigrateTest, ARelayRefusesSchema10AndMigrateThenAddsTheAttemptHistory) {
  const std::string migrated = SchemaOf(db_);
  db_.Exec("ALTER TABLE room_outbox DROP COLUMN attempt_count, DROP COLUMN attempts");
  db_.Exec("DELETE FROM room_outbox_schema_version WHERE version >= 11");
  db_.Exec(
      "INSERT INTO room_outbox (event_id, event_type, room_id, command_id, envelope, "
      "created_at_ms, updated_at_ms) SELECT CONCAT('h', seq), 'RoomGiftSent', CONCAT('r', seq % "
      "3), CONCAT('c', seq), JSON_OBJECT('event_id', CONCAT('h', seq), 'event_type', "
      "'RoomGiftSent', 'room_id', CONCAT('r', seq % 3), 'room_seq', seq, 'command_id', "
      "CONCAT('c', seq), 'request_id', '', 'node_id', 'n', 'occurred_at_ms', 1, 'payload', "
      "JSON_OBJECT()), 1, 1 FROM seq_1_to_20");
  CommandResult once = Relay({"--once"});
  EXPECT_EQ(once.exit_code, 2) << once.Describe();
  EXPECT_THAT(once.err,
              HasSubstr("schema is version 10, older than the 11 this outbox-relay needs"));

  CommandResult run = Relay({"migrate"});
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  EXPECT_EQ(run.Json()["from_version"], 10);
  ASSERT_EQ(run.Json()["steps"].size(), 1u) << run.Describe();
  EXPECT_EQ(run.Json()["steps"][0]["name"], "011_attempts");
  EXPECT_EQ(run.Json()["steps"][0]["already_applied"], 0);
  EXPECT_EQ(SchemaOf(db_), migrated);
  EXPECT_EQ(db_.Scalar("SELECT COUNT(*) FROM room_outbox WHERE attempt_count = 0 AND attempts "
                       "IS NULL"),
            20);

  CommandResult drained = Relay({"--once"});
  EXPECT_EQ(drained.exit_code, 0) << drained.Describe();
  EXPECT_EQ(db_.Scalar("SELECT COUNT(*) FROM room_outbox WHERE status = 'published' AND "
                       "attempt_count = 1 AND attempts LIKE '%\tpublished\t%'"),
            20);
}

}  // namespace
}  // namespace room_outbox::testing
