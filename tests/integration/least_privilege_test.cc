// Least privilege, against the private MariaDB (both statement sets): three accounts get exactly
// the grants of docs/grants.sql, and each side runs with its own account only. The operator
// migrates an empty database and runs show, park, requeue and purge; the hook commits (with its
// sync publish to the fake IM, a duplicate retry and its app-budget membership); a real
// outbox-relay claims, leases, marks, expires and joins the app's budget. Each account is then
// refused what it must not do, and docs/databases.md quotes every grant of docs/grants.sql.
#include <gtest/gtest.h>
#include <mysqld_error.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "core/mysql/connection.h"
#include "room_outbox/hook.h"
#include "support/fake_im_server.h"
#include "support/grants.h"
#include "support/mysql_admin.h"
#include "support/relay_command.h"
#include "support/relay_process.h"
#include "support/test_database.h"
#include "support/wait.h"

namespace room_outbox::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

const std::filesystem::path kSource = ROOM_OUTBOX_SOURCE_DIR;
constexpr char kPassword[] = "least-privilege-test";

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

class LeastPrivilegeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(db_.valid());
    ASSERT_TRUE(im_.running()) << im_.start_error();
    // An empty database, as a first install finds it.
    db_.Exec(
        "DROP TABLE room_outbox_relay_run, room_outbox_im_member, room_outbox, room_command_log, "
        "room_outbox_schema_version");
    for (const char* role : {"op", "hook", "relay"}) {
      db_.Exec("DROP USER IF EXISTS " + Account(role));
      db_.Exec("CREATE USER " + Account(role) + " IDENTIFIED BY '" + kPassword + "'");
    }
    ASSERT_GT(RunGrants("{operator}"), 0u);
  }

  void TearDown() override {
    for (const char* role : {"op", "hook", "relay"})
      db_.Exec("DROP USER IF EXISTS " + Account(role));
  }

  // 'lp<role>_<pid>_<n>_<random>'@'localhost': unique to this test's database, <= 32 characters.
  std::string User(const std::string& role) const { return "lp" + role + db_.name().substr(1); }
  std::string Account(const std::string& role) const { return "'" + User(role) + "'@'localhost'"; }

  // Runs (as root) the grants of docs/grants.sql to `target` ("{operator}", "{hook}",
  // "{relay}"), with this test's database and accounts; returns how many.
  size_t RunGrants(const std::string& target) {
    const std::map<std::string, std::string> names = {{"{database}", "`" + db_.name() + "`"},
                                                      {"{operator}", Account("op")},
                                                      {"{hook}", Account("hook")},
                                                      {"{relay}", Account("relay")}};
    const std::vector<std::string> grants = GrantsTo(target, names);
    for (const std::string& grant : grants) db_.Exec(grant);
    return grants.size();
  }

  MysqlOptions Options(const std::string& role) const {
    MysqlOptions options = db_.Options();
    options.user = User(role);
    options.password = kPassword;
    return options;
  }

  // A relay config (started or not) whose [mysql] is `role`'s account, its password in a file.
  std::unique_ptr<RelayProcess> RelayAs(const std::string& role, RelayProcessOptions options = {}) {
    options.mysql["password_file"] = "\"mysql-password\"";
    auto relay = std::make_unique<RelayProcess>(Options(role), im_, std::move(options));
    const std::string path = relay->dir() + "/mysql-password";
    std::ofstream(path) << kPassword;
    ::chmod(path.c_str(), 0600);
    return relay;
  }

  CommandResult Run(const RelayProcess& config, std::vector<std::string> args) {
    args.push_back("--config");
    args.push_back(config.config_path());
    return RunRelayCommand(args);
  }

  std::unique_ptr<Hook> NewHook(SyncPublishMode mode) {
    HookOptions options;
    options.mysql = Options("hook");
    options.tencent_im = im_.ClientOptions();
    options.tencent_im.requests_per_second = 100;  // a member of the app's budget when it sends
    options.sync_publish = mode;
    options.sync_publish_timeout = seconds(5);  // ample on a busy machine: the fake answers at once
    Error error;
    auto hook = CreateHook(options, &error);
    EXPECT_TRUE(hook) << error.message;
    return hook;
  }

  // The server's error number for `sql` run as `role` (0: it succeeded).
  unsigned ErrnoAs(const std::string& role, const std::string& sql) {
    auto conn = core::MariaDbConnection::Connect(Options(role));
    if (!conn) {
      ADD_FAILURE() << role << " cannot connect: " << conn.error().message;
      return 0;
    }
    return (*conn)->QueryText("least privilege", sql) ? 0 : (*conn)->LastErrno();
  }

  int64_t Count(const std::string& where) {
    return db_.Scalar("SELECT COUNT(*) FROM room_outbox WHERE " + where);
  }
  int64_t Members() { return db_.Scalar("SELECT COUNT(*) FROM room_outbox_im_member"); }

  // The operator migrates the empty database; then the hook's and the relay's grants.
  void MigrateAsOperator(const RelayProcess& op) {
    CommandResult migrate = Run(op, {"migrate"});
    ASSERT_EQ(migrate.exit_code, 0) << migrate.Describe();
    EXPECT_EQ(migrate.Json()["to_version"], 11) << migrate.Describe();
    ASSERT_GT(RunGrants("{hook}"), 0u);
    ASSERT_GT(RunGrants("{relay}"), 0u);
  }

  TestDatabase db_;
  FakeImServer im_;
};

std::vector<Event> Events(const std::string& tag, std::vector<std::string> types) {
  std::vector<Event> events;
  for (size_t i = 0; i < types.size(); ++i) {
    events.push_back(Event{"evt-" + tag + "-" + std::to_string(i), types[i], 1, 0, "{}"});
  }
  return events;
}

TEST_F(LeastPrivilegeTest, EachSideRunsWithItsOwnGrantsOnly) {
  auto op = RelayAs("op");
  MigrateAsOperator(*op);

  // The hook: a commit sync-published, its duplicate retry, and rows left to the relay.
  auto sending = NewHook(SyncPublishMode::kInline);
  ASSERT_TRUE(sending);
  const Command sent_command{"cmd-lp-1", "room-lp-1", "SendGift", "req-1", 1, "{}"};
  CommitResult sent =
      sending->Commit(sent_command, Events("lp-1", {"RoomGiftSent", "RoomGiftSent"}));
  ASSERT_EQ(sent.status, CommitStatus::kCommitted) << sent.error.message;
  for (const EventDelivery& e : sent.events) {
    EXPECT_EQ(e.state, DeliveryState::kPublished) << e.error;
  }
  EXPECT_EQ(sending->Commit(sent_command, Events("lp-1", {"RoomGiftSent"})).status,
            CommitStatus::kDuplicate);
  EXPECT_EQ(Members(), 1) << "the sending hook is a member of the app's IM budget";
  auto quiet = NewHook(SyncPublishMode::kOff);
  ASSERT_TRUE(quiet);
  for (const char* n : {"2", "3"}) {
    CommitResult left =
        quiet->Commit(Command{std::string("cmd-lp-") + n, std::string("room-lp-") + n, "SendGift",
                              "req", 1, "{}"},
                      Events(std::string("lp-") + n, {"RoomGiftSent", "RoomStale"}));
    ASSERT_EQ(left.status, CommitStatus::kCommitted) << left.error.message;
  }
  EXPECT_EQ(Count("status = 'pending'"), 4);

  // The operator parks one of them before any relay runs.
  CommandResult park = Run(*op, {"park", "evt-lp-3-0", "--reason", "least privilege"});
  ASSERT_EQ(park.exit_code, 0) << park.Describe();

  // A relay as its own account: claims, leases, marks published, parks what expired, and beats
  // in the app's budget.
  RelayProcessOptions relay_options;
  relay_options.node_id = "least-privilege-relay";
  relay_options.tencent_im = {{"requests_per_second", "100"},
                              {"max_age_by_type", "{ RoomStale = \"1ms\" }"}};
  auto relay = RelayAs("relay", relay_options);
  ASSERT_TRUE(relay->Start());
  ASSERT_TRUE(Eventually(
      [&] { return Count("status = 'published'") == 3 && Count("status = 'parked'") == 3; },
      seconds(30)))
      << relay->StderrTail();
  EXPECT_EQ(Count("status = 'parked' AND last_error = 'expired'"), 2);
  EXPECT_EQ(relay->CountLogLines({"cannot check the database schema version"}), 0u)
      << "the relay checked the schema version at start\n"
      << relay->StderrTail();
  ASSERT_TRUE(Eventually([&] { return Members() == 2; }, seconds(10))) << relay->StderrTail();

  // The operator: stats, show, requeue; the relay delivers what was requeued; purge.
  CommandResult stats = Run(*op, {"stats", "--window", "1s"});
  ASSERT_EQ(stats.exit_code, 0) << stats.Describe();
  CommandResult show = Run(*op, {"show", "evt-lp-2-1"});
  ASSERT_EQ(show.exit_code, 0) << show.Describe();
  EXPECT_EQ(show.Json()["status"], "parked") << show.Describe();
  CommandResult requeue = Run(*op, {"requeue", "--all-parked"});
  ASSERT_EQ(requeue.exit_code, 0) << requeue.Describe();
  EXPECT_EQ(requeue.Json()["requeued"], 3) << requeue.Describe();
  ASSERT_TRUE(Eventually([&] { return Count("status = 'published'") == 6; }, seconds(30)))
      << relay->StderrTail();
  ASSERT_TRUE(Eventually(
      [&] {
        CommandResult purge =
            Run(*op, {"purge", "--published-before", "1ms", "--command-log-before", "1ms"});
        EXPECT_EQ(purge.exit_code, 0) << purge.Describe();
        return db_.Scalar("SELECT COUNT(*) FROM room_outbox") == 0 &&
               db_.Scalar("SELECT COUNT(*) FROM room_command_log") == 0;
      },
      seconds(10)));

  // The relay leaves the app's budget as it stops; then the hook.
  auto exit = relay->Stop(seconds(20));
  ASSERT_TRUE(exit) << relay->StderrTail();
  EXPECT_EQ(exit->exit_code, 0) << relay->StderrTail();
  EXPECT_EQ(Members(), 1);
  sending.reset();
  EXPECT_EQ(Members(), 0);
}

TEST_F(LeastPrivilegeTest, EachAccountIsRefusedWhatItDoesNotNeed) {
  auto op = RelayAs("op");
  MigrateAsOperator(*op);
  // The hook never rewrites a committed event, deletes a row, or changes the schema.
  EXPECT_EQ(ErrnoAs("hook", "UPDATE room_outbox SET envelope = '{}'"),
            ER_COLUMNACCESS_DENIED_ERROR);
  EXPECT_EQ(ErrnoAs("hook", "UPDATE room_outbox SET retry_count = 0"),
            ER_COLUMNACCESS_DENIED_ERROR);
  EXPECT_EQ(ErrnoAs("hook", "DELETE FROM room_outbox"), ER_TABLEACCESS_DENIED_ERROR);
  EXPECT_EQ(ErrnoAs("hook", "UPDATE room_command_log SET payload = '{}'"),
            ER_TABLEACCESS_DENIED_ERROR);
  EXPECT_EQ(ErrnoAs("hook", "ALTER TABLE room_outbox ADD COLUMN lp INT"),
            ER_TABLEACCESS_DENIED_ERROR);
  EXPECT_EQ(ErrnoAs("hook", "DROP TABLE room_outbox"), ER_TABLEACCESS_DENIED_ERROR);
  // The relay never reads or writes the command log, inserts or deletes an event, or rewrites one.
  EXPECT_EQ(ErrnoAs("relay", "SELECT COUNT(*) FROM room_command_log"), ER_TABLEACCESS_DENIED_ERROR);
  EXPECT_EQ(ErrnoAs("relay",
                    "INSERT INTO room_command_log (command_id, room_id, command_type, payload, "
                    "created_at_ms) VALUES ('c', 'r', 't', '{}', 0)"),
            ER_TABLEACCESS_DENIED_ERROR);
  EXPECT_EQ(ErrnoAs("relay", "DELETE FROM room_outbox"), ER_TABLEACCESS_DENIED_ERROR);
  // The room schedule's idle rooms go with the operator's purge, not with a relay.
  EXPECT_EQ(ErrnoAs("relay", "DELETE FROM room_outbox_room"), ER_TABLEACCESS_DENIED_ERROR);
  EXPECT_EQ(ErrnoAs("relay", "UPDATE room_outbox SET envelope = '{}'"),
            ER_COLUMNACCESS_DENIED_ERROR);
  EXPECT_EQ(ErrnoAs("relay", "ALTER TABLE room_outbox ADD COLUMN lp INT"),
            ER_TABLEACCESS_DENIED_ERROR);
  // The operator migrates and runs the commands, but drops nothing.
  EXPECT_EQ(ErrnoAs("op", "DROP TABLE room_outbox"), ER_TABLEACCESS_DENIED_ERROR);
  // Each of them may do what it needs (the same connection path succeeds).
  EXPECT_EQ(ErrnoAs("hook", "SELECT COUNT(*) FROM room_outbox"), 0u);
  EXPECT_EQ(ErrnoAs("relay", "SELECT COUNT(*) FROM room_outbox_schema_version"), 0u);
}

// docs/databases.md quotes each statement of docs/grants.sql with the names it documents, so the
// page and the grants the test runs are one text.
TEST(LeastPrivilegeDocs, TheDatabasesPageQuotesEveryGrant) {
  const std::string page = ReadFile(kSource / "docs" / "databases.md");
  const std::map<std::string, std::string> names = {{"{database}", "room_outbox"},
                                                    {"{operator}", "'outbox_operator'@'%'"},
                                                    {"{hook}", "'outbox_hook'@'%'"},
                                                    {"{relay}", "'outbox_relay'@'%'"}};
  const std::vector<std::string> statements = GrantStatements();
  ASSERT_EQ(statements.size(), 14u);
  for (const std::string& statement : statements) {
    EXPECT_NE(page.find(Substitute(statement, names)), std::string::npos)
        << "docs/databases.md does not quote: " << Substitute(statement, names);
  }
}

}  // namespace
}  // namespace room_outbox::testing
