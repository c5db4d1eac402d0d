// room-sim, the sample room-service, as a process: it commits through the hook, keeps its room
// snapshot in the same transaction, and exits 0 whether or not IM is up.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "support/fake_im_server.h"
#include "support/test_database.h"

namespace room_outbox::testing {
namespace {

struct RunResult {
  int exit_code = -1;
  std::string stdout_text;
};

class RoomSimTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(db_.valid());
    ASSERT_TRUE(im_.running()) << im_.start_error();
    std::ifstream in(std::string(ROOM_OUTBOX_SOURCE_DIR) + "/sim/room_snapshot.sql");
    std::stringstream sql;
    sql << in.rdbuf();
    db_.Exec(sql.str());
    dir_ = std::filesystem::temp_directory_path() / ("room-sim-test-" + db_.name());
    std::filesystem::create_directories(dir_);
    std::ofstream(dir_ / "tim-secret-key") << im_.options().secret_key;
    std::ofstream config(dir_ / "relay.toml");
    config << "node_id = \"sim-test\"\n"
           << "[mysql]\nsocket = \"" << db_.Options().socket << "\"\nuser = \"root\"\n"
           << "database = \"" << db_.name() << "\"\n"
           << "dialect = \"" << SqlDialectName(db_.Options().dialect) << "\"\n"
           << "[tencent_im]\nendpoint = \"" << im_.endpoint() << "\"\n"
           << "sdk_app_id = " << im_.options().sdk_app_id << "\n"
           << "admin_identifier = \"" << im_.options().identifier << "\"\n"
           << "secret_key_file = \"tim-secret-key\"\nrequests_per_second = 0\n"
           << "[hook]\nsync_publish_timeout = \"300ms\"\n";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  RunResult Run(const std::string& args) {
    const std::string command = std::string(ROOM_OUTBOX_BINARY_DIR) + "/room-sim --config " +
                                (dir_ / "relay.toml").string() + " " + args + " 2>/dev/null";
    RunResult result;
    FILE* out = popen(command.c_str(), "r");
    if (out == nullptr) {
      ADD_FAILURE() << "popen failed: " << command;
      return result;
    }
    char buf[4096];
    while (size_t n = fread(buf, 1, sizeof buf, out)) {
      result.stdout_text.append(buf, n);
    }
    const int status = pclose(out);
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return result;
  }

  static nlohmann::json Summary(const RunResult& run) {
    auto summary = nlohmann::json::parse(run.stdout_text, nullptr, false);
    EXPECT_FALSE(summary.is_discarded()) << "not one JSON line: " << run.stdout_text;
    return summary;
  }

  TestDatabase db_;
  FakeImServer im_;
  std::filesystem::path dir_;
};

TEST_F(RoomSimTest, CommandsSucceedWithImDownAndTheirEventsStayPending) {
  im_.SetMode("down");

  RunResult run = Run("--rooms 3 --commands 40 --seed 5 --run-id down");

  EXPECT_EQ(run.exit_code, 0);
  nlohmann::json summary = Summary(run);
  EXPECT_EQ(summary["commands"], 40);
  EXPECT_EQ(summary["failed"], 0);
  EXPECT_EQ(summary["unknown"], 0);
  EXPECT_EQ(summary["sync_published"], 0);
  EXPECT_GT(summary["left_pending"].get<int64_t>(), 0);
  EXPECT_EQ(db_.Scalar("SELECT COUNT(*) FROM room_command_log"), 40);
  EXPECT_EQ(db_.Scalar("SELECT COUNT(*) FROM room_outbox WHERE status='pending'"),
            summary["left_pending"].get<int64_t>());
  // Each room's snapshot was written with its commands: its seq is its command count.
  EXPECT_EQ(db_.Scalar("SELECT COUNT(*) FROM room_snapshot s WHERE s.room_seq <> (SELECT "
                       "COUNT(*) FROM room_command_log c WHERE c.room_id = s.room_id)"),
            0);
  EXPECT_EQ(db_.Scalar("SELECT SUM(room_seq) FROM room_snapshot"), 40);
}

TEST_F(RoomSimTest, WithImUpTheSyncPublishDeliversEveryImEvent) {
  RunResult run = Run("--rooms 3 --commands 40 --seed 5 --run-id up");

  EXPECT_EQ(run.exit_code, 0);
  nlohmann::json summary = Summary(run);
  EXPECT_EQ(summary["commands"], 40);
  EXPECT_EQ(summary["sync_published"], summary["im_events"]);
  EXPECT_EQ(summary["left_pending"], 0);
  EXPECT_EQ(im_.Stats().unique_event_ids, summary["im_events"].get<size_t>());
  EXPECT_EQ(db_.Scalar("SELECT COUNT(*) FROM room_outbox WHERE status='pending'"), 0);
}

TEST_F(RoomSimTest, ARepeatedRunIdWritesNothingNew) {
  ASSERT_EQ(Run("--rooms 2 --commands 10 --seed 9 --run-id same").exit_code, 0);

  RunResult again = Run("--rooms 2 --commands 10 --seed 9 --run-id same");

  EXPECT_EQ(again.exit_code, 0);
  nlohmann::json summary = Summary(again);
  EXPECT_EQ(summary["duplicates"], 10);
  EXPECT_EQ(summary["commands"], 0);
  EXPECT_EQ(db_.Scalar("SELECT COUNT(*) FROM room_command_log"), 10);
}

TEST_F(RoomSimTest, FourThreadsCommitEveryCommandOnceAndEachRoomInCommandOrder) {
  // IM down: what the commits leave does not depend on how fast the sync publishes are.
  im_.SetMode("down");

  RunResult run = Run("--rooms 10 --commands 200 --threads 4 --seed 3 --run-id threads");

  EXPECT_EQ(run.exit_code, 0);
  nlohmann::json summary = Summary(run);
  EXPECT_EQ(summary["threads"], 4);
  EXPECT_EQ(summary["commands"], 200);
  EXPECT_EQ(summary["failed"], 0);
  EXPECT_EQ(summary["duplicates"], 0);
  EXPECT_GT(summary["commands_per_second"].get<double>(), 0);
  EXPECT_EQ(summary["sync_published"], 0);
  EXPECT_EQ(summary["left_pending"], summary["im_events"]);
  EXPECT_EQ(db_.Scalar("SELECT COUNT(*) FROM room_outbox WHERE status='pending'"),
            summary["left_pending"].get<int64_t>());
  // Every command committed exactly once, by four threads, each room by one of them.
  EXPECT_EQ(db_.Scalar("SELECT COUNT(DISTINCT command_id) FROM room_command_log"), 200);
  EXPECT_EQ(db_.Scalar("SELECT COUNT(*) FROM room_command_log"), 200);
  EXPECT_EQ(db_.Scalar("SELECT COUNT(DISTINCT SUBSTRING_INDEX(command_id, '-c', 1)) FROM "
                       "room_command_log"),
            4);
  EXPECT_EQ(db_.Scalar("SELECT COUNT(*) FROM (SELECT room_id FROM room_command_log GROUP BY "
                       "room_id HAVING COUNT(DISTINCT SUBSTRING_INDEX(command_id, '-c', 1)) > 1) "
                       "shared_rooms"),
            0);
  EXPECT_EQ(db_.Scalar("SELECT COUNT(*) FROM room_outbox"), summary["events"].get<int64_t>());
  // Each room's commands were committed in order: room_seq 1, 2, ... in commit (id) order, and
  // its outbox rows follow the same order.
  EXPECT_EQ(db_.Scalar("SELECT COUNT(*) FROM room_command_log a JOIN room_command_log b ON "
                       "b.room_id = a.room_id AND b.id > a.id AND b.room_seq <= a.room_seq"),
            0);
  EXPECT_EQ(db_.Scalar("SELECT COUNT(*) FROM room_snapshot s WHERE s.room_seq <> (SELECT "
                       "COUNT(*) FROM room_command_log c WHERE c.room_id = s.room_id)"),
            0);
  EXPECT_EQ(db_.Scalar("SELECT COUNT(*) FROM room_outbox a JOIN room_command_log ca ON "
                       "ca.command_id = a.command_id JOIN room_outbox b ON b.room_id = a.room_id "
                       "AND b.id > a.id JOIN room_command_log cb ON cb.command_id = b.command_id "
                       "WHERE cb.room_seq < ca.room_seq"),
            0);
}

TEST_F(RoomSimTest, BadUsageExitsTwo) {
  EXPECT_EQ(Run("--rooms 0 --commands 1").exit_code, 2);
  EXPECT_EQ(Run("--rooms 4 --commands 1 --threads 0").exit_code, 2);
  EXPECT_EQ(Run("--rooms 4 --commands 1 --threads 5").exit_code, 2);
}

// What `command` prints on stdout and stderr.
std::string Output(const std::string& command) {
  std::string text;
  FILE* out = popen((command + " 2>&1").c_str(), "r");
  if (out == nullptr) {
    ADD_FAILURE() << "popen failed: " << command;
    return text;
  }
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, out)) text.append(buf, n);
  pclose(out);
  return text;
}

// A room service that is not root, under the shipped drop-in: the secret files are root-only
// (0600), systemd hands the service copies it may read in its own $CREDENTIALS_DIRECTORY
// (LoadCredential=), and the hook resolves the config's relative names there as the relay does.
// The database is absent: a config that loads gets as far as connecting.
TEST(RoomServiceCredentialsTest, ANonRootServiceReadsRootOnlySecretsThroughItsCredentials) {
  if (::geteuid() != 0) GTEST_SKIP() << "switching to the user nobody needs root";
  namespace fs = std::filesystem;
  char tmpl[] = "/tmp/room-service-creds-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const fs::path dir = tmpl;
  ASSERT_EQ(::chmod(dir.c_str(), 0755), 0);
  std::ofstream(dir / "relay.toml")
      << "[mysql]\nsocket = \"" << (dir / "no-server.sock").string()
      << "\"\nconnect_timeout = \"1s\"\npassword_file = \"mysql-password\"\n"
      << "[tencent_im]\nsdk_app_id = 1400000000\nsecret_key_file = \"tim-secret-key\"\n";
  const fs::path creds = dir / "credentials";
  fs::create_directories(creds);
  for (const char* name : {"mysql-password", "tim-secret-key"}) {
    std::ofstream(dir / name) << "secret-" << name << "\n";
    ASSERT_EQ(::chmod((dir / name).c_str(), 0600), 0);  // the root-only source
    fs::copy_file(dir / name, creds / name);            // what LoadCredential= does at start
    ASSERT_EQ(::chown((creds / name).c_str(), 65534, 65534), 0);
    ASSERT_EQ(::chmod((creds / name).c_str(), 0400), 0);
  }
  ASSERT_EQ(::chown(creds.c_str(), 65534, 65534), 0);
  ASSERT_EQ(::chmod(creds.c_str(), 0700), 0);
  const std::string as_nobody = "setpriv --reuid=65534 --regid=65534 --clear-groups env -i ";
  const std::string sim = std::string(ROOM_OUTBOX_BINARY_DIR) + "/room-sim --config " +
                          (dir / "relay.toml").string() + " --rooms 1 --commands 1";

  // Without the credentials the root-only files are out of reach: the config does not load.
  const std::string without = Output(as_nobody + sim);
  EXPECT_THAT(without, ::testing::HasSubstr("invalid config")) << without;
  EXPECT_THAT(without, ::testing::HasSubstr("mysql.password_file")) << without;
  // With them it loads and the hook goes on to the (absent) database.
  const std::string with =
      Output(as_nobody + "CREDENTIALS_DIRECTORY=" + creds.string() + " " + sim);
  EXPECT_THAT(with, ::testing::Not(::testing::HasSubstr("invalid config"))) << with;
  EXPECT_THAT(with, ::testing::HasSubstr("no-server.sock")) << with;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace room_outbox::testing
