// outbox-relay migrate against the test MariaDB (in the MySQL set too: the suite's second run):
// a fresh database gets every step, a second run applies nothing, the schema files applied by
// hand give the same schema, a database migrated by hand before the version table existed (or
// half way through a step) is recognised and completed, a newer one is refused, --dry-run changes
// nothing, outbox-relay and its operator commands refuse a schema older than they need, and run on
// one that lacks only a step they do not need (008).
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

const std::vector<int64_t> kAllVersions = {0, 1, 2, 3, 4, 5, 6, 7, 8};

TEST_F(MigrateTest, AFreshDatabaseRecordsEveryStepAndASecondRunAppliesNothing) {
  EXPECT_EQ(Recorded(), kAllVersions);  // TestDatabase migrated it with the same code
  CommandResult again = Relay({"migrate"});
  ASSERT_EQ(again.exit_code, 0) << again.Describe();
  EXPECT_EQ(again.Json()["from_version"], 8) << again.Describe();
  EXPECT_EQ(again.Json()["to_version"], 8);
  EXPECT_TRUE(again.Json()["steps"].empty()) << again.Describe();
  EXPECT_EQ(Recorded(), kAllVersions);
}

TEST_F(MigrateTest, TheFilesAppliedByHandInOrderGiveTheMigratedSchema) {
  TestDatabase by_hand;
  ASSERT_TRUE(by_hand.valid());
  by_hand.Exec(
      "DROP TABLE room_outbox, room_command_log, room_outbox_schema_version, "
      "room_outbox_im_member");
  for (const auto& file : SchemaFiles()) {
    std::ifstream in(file);
    std::stringstream text;
    text << in.rdbuf();
    by_hand.Exec(text.str());  // as a client runs a file: every statement once, in order
  }
  EXPECT_EQ(SchemaOf(by_hand), SchemaOf(db_));
  EXPECT_EQ(by_hand.Scalar("SELECT COUNT(*) FROM room_outbox_schema_version"), 9);
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
  ASSERT_EQ(steps.size(), 9u) << run.Describe();
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
  ASSERT_EQ(run.Json()["steps"].size(), 6u) << run.Describe();
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
  ASSERT_EQ(dry.Json()["steps"].size(), 5u) << dry.Describe();
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
  EXPECT_EQ(Recorded(), (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 99}));
}

TEST_F(MigrateTest, RelayAndOperatorCommandsRefuseAnOlderSchemaUntilMigrated) {
  db_.Exec("ALTER TABLE room_outbox DROP COLUMN drop_count");
  db_.Exec("DROP TABLE room_outbox_im_member");
  db_.Exec("DELETE FROM room_outbox_schema_version WHERE version >= 4");
  CommandResult once = Relay({"--once"});
  EXPECT_EQ(once.exit_code, 2) << once.Describe();
  EXPECT_THAT(once.err, HasSubstr("schema is version 3, older than the 7 this outbox-relay needs"));
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

// Schema 008 only rebuilds idx_command_id to cover the MySQL set's read-back: a relay runs on
// schema 7 (it needs nothing of 008), and migrate then applies 008 alone, online, to the same
// schema a fresh database gets.
TEST_F(MigrateTest, ARelayRunsOnSchema7AndMigrateThenRebuildsTheCommandIndex) {
  const std::string migrated = SchemaOf(db_);
  db_.Exec(
      "ALTER TABLE room_outbox DROP INDEX idx_command_id, ADD INDEX idx_command_id (command_id)");
  db_.Exec("DELETE FROM room_outbox_schema_version WHERE version >= 8");
  CommandResult once = Relay({"--once"});
  EXPECT_EQ(once.exit_code, 0) << once.Describe();

  CommandResult run = Relay({"migrate"});
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  EXPECT_EQ(run.Json()["from_version"], 7);
  EXPECT_EQ(run.Json()["to_version"], 8);
  ASSERT_EQ(run.Json()["steps"].size(), 1u) << run.Describe();
  EXPECT_EQ(run.Json()["steps"][0]["name"], "008_command_rows");
  EXPECT_EQ(run.Json()["steps"][0]["already_applied"], 0);
  EXPECT_EQ(SchemaOf(db_), migrated);
  auto columns = db_.Query(
      "SELECT GROUP_CONCAT(column_name ORDER BY seq_in_index) FROM information_schema.statistics "
      "WHERE table_schema = '" +
      db_.name() + "' AND table_name = 'room_outbox' AND index_name = 'idx_command_id'");
  ASSERT_EQ(columns.size(), 1u);
  EXPECT_EQ(columns[0][0].value_or(""), "command_id,id,event_id");
  EXPECT_EQ(Recorded(), kAllVersions);
}

// The server's SQL error log (MariaDB's sql_errlog plugin) lines of `user`: every statement the
// server answered with an error on that account's connections.
class ServerErrorLog {
 public:
  explicit ServerErrorLog(TestDatabase& root) : root_(root) {
    if (root_.Scalar("SELECT COUNT(*) FROM information_schema.PLUGINS WHERE PLUGIN_NAME = "
                     "'SQL_ERROR_LOG'") == 0) {
      root_.Exec("INSTALL SONAME 'sql_errlog'");
    }
    auto dir = root_.Query("SELECT @@datadir, @@sql_error_log_filename");
    path_ = *dir.at(0)[0] + "/" + *dir.at(0)[1];
  }

  // The ERROR lines of `user`, once the line of `sentinel` (a failing statement the test sent
  // last, as `user`) is there: the log is written as errors happen, so the wait is for it.
  std::vector<std::string> ErrorsOf(const std::string& user, const std::string& sentinel) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    std::vector<std::string> errors;
    while (std::chrono::steady_clock::now() < deadline) {
      errors.clear();
      bool sentinel_seen = false;
      std::ifstream in(path_);
      for (std::string line; std::getline(in, line);) {
        if (line.find(" " + user + "[" + user + "] @ ") == std::string::npos ||
            line.find(" ERROR ") == std::string::npos) {
          continue;
        }
        if (line.find(sentinel) != std::string::npos) {
          sentinel_seen = true;
        } else {
          errors.push_back(line);
        }
      }
      if (sentinel_seen) return errors;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ADD_FAILURE() << "the sentinel never reached " << path_;
    return errors;
  }

 private:
  TestDatabase& root_;
  std::string path_;
};

TEST_F(MigrateTest, AFreshInstallSendsNoStatementTheServerAnswersWithAnError) {
  db_.Exec(
      "DROP TABLE room_outbox, room_command_log, room_outbox_schema_version, "
      "room_outbox_im_member");
  ServerErrorLog log(db_);
  // An account of this test's own, so the shared server's other errors are not counted.
  const std::string user =
      "mig_" + std::to_string(std::hash<std::string>{}(db_.name()) % 100000000);
  db_.Exec("CREATE OR REPLACE USER '" + user + "'@'localhost' IDENTIFIED BY 'probe-pw'");
  db_.Exec("GRANT ALL ON `" + db_.name() + "`.* TO '" + user + "'@'localhost'");
  MysqlOptions options = db_.Options();
  options.user = user;
  options.password = "probe-pw";
  {
    auto conn = core::MariaDbConnection::Connect(options);
    ASSERT_TRUE(conn) << conn.error().message;
    auto applied = relay::migrate::MigrateToLatest(**conn);
    ASSERT_TRUE(applied) << applied.error().message;
    EXPECT_EQ(applied->size(), kAllVersions.size());
    auto checked = relay::migrate::CheckSchemaVersion(**conn);
    EXPECT_TRUE(checked) << checked.error().message;
    const std::string sentinel = "no_such_table_after_migrate";
    EXPECT_FALSE((*conn)->QueryText("sentinel", "SELECT * FROM " + sentinel));
    EXPECT_THAT(log.ErrorsOf(user, sentinel), ::testing::IsEmpty());
  }
  EXPECT_EQ(Recorded(), kAllVersions);
  db_.Exec("DROP USER '" + user + "'@'localhost'");
}

}  // namespace
}  // namespace room_outbox::testing
