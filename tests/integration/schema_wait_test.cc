// The daemon on a database whose schema is older than it needs, as a real outbox-relay process
// (daemon/schema_wait.h): it stays up, /readyz says not ready with the version found, the version
// needed and the command to run, it publishes nothing; `outbox-relay migrate` brings the schema
// up and the same process becomes ready and delivers the pending row by itself. SIGTERM ends the
// wait at once with exit 0. (--once and the operator commands still refuse at once: migrate_test.)
#include "daemon/schema_wait.h"

#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>

#include <chrono>
#include <fstream>
#include <string>

#include "core/fd.h"
#include "support/fake_im_server.h"
#include "support/loopback_http.h"
#include "support/relay_command.h"
#include "support/relay_process.h"
#include "support/test_database.h"
#include "support/test_rows.h"
#include "support/wait.h"

namespace room_outbox::testing {
namespace {

using std::chrono::seconds;
using ::testing::HasSubstr;

class SchemaWaitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(db_.valid());
    ASSERT_TRUE(im_.running()) << im_.start_error();
    // Schema version 3: what a database of a release before 004 holds.
    db_.Exec("ALTER TABLE room_outbox DROP COLUMN drop_count");
    db_.Exec("DROP TABLE room_outbox_im_member");
    db_.Exec("DELETE FROM room_outbox_schema_version WHERE version >= 4");
    relay_ = std::make_unique<RelayProcess>(db_, im_);
    port_ = FreePort();
    std::ofstream(relay_->config_path(), std::ios::app)
        << "\n[metrics]\nlisten = \"127.0.0.1:" << port_ << "\"\n";
  }

  std::string StatusOf(const std::string& event_id) {
    auto rows = db_.Query("SELECT status FROM room_outbox WHERE event_id = " + SqlQuote(event_id));
    return rows.empty() || !rows[0][0] ? "" : *rows[0][0];
  }

  TestDatabase db_;
  FakeImServer im_;
  std::unique_ptr<RelayProcess> relay_;
  int port_ = 0;
};

TEST_F(SchemaWaitTest, StaysUpNotReadyUntilMigratedThenDeliversByItself) {
  db_.Exec(
      "INSERT INTO room_outbox (event_id, event_type, room_id, command_id, envelope, status, "
      "retry_count, next_attempt_at_ms, created_at_ms, updated_at_ms) VALUES ('ev-wait', "
      "'RoomGiftSent', 'room-wait', 'cmd-wait', " +
      SqlQuote(TestEnvelope("ev-wait", "room-wait", 1, "schema-wait-test")) +
      ", 'pending', 0, 0, " + kServerNowSql + ", " + kServerNowSql + ")");
  ASSERT_TRUE(relay_->Start());

  HttpAnswer ready;
  // The listener answers 503 from its start; the reason is the schema once the check has run.
  ASSERT_TRUE(Eventually(
      [&] {
        ready = Get(port_, "/readyz");
        return ready.status == 503 && ready.body.find("schema") != std::string::npos;
      },
      seconds(20)))
      << ready.body << relay_->StderrTail();
  EXPECT_THAT(ready.body,
              HasSubstr("schema is version 3, older than the 11 this outbox-relay needs"));
  EXPECT_THAT(ready.body, HasSubstr("run `outbox-relay migrate`"));
  EXPECT_EQ(Get(port_, "/healthz").status, 200);
  EXPECT_TRUE(relay_->Alive()) << relay_->StderrTail();
  EXPECT_EQ(relay_->CountLogLines({"waiting for the database schema", "schema_version=3"}), 1u)
      << relay_->StderrTail();
  EXPECT_EQ(im_.Stats().requests, 0u);
  EXPECT_EQ(StatusOf("ev-wait"), "pending");

  CommandResult migrated = RunRelayCommand({"migrate", "--config", relay_->config_path()});
  ASSERT_EQ(migrated.exit_code, 0) << migrated.Describe();

  ASSERT_TRUE(Eventually([&] { return Get(port_, "/readyz").status == 200; }, seconds(30)))
      << relay_->StderrTail();
  ASSERT_TRUE(Eventually([&] { return StatusOf("ev-wait") == "published"; }, seconds(30)))
      << relay_->StderrTail();
  EXPECT_EQ(im_.Stats().delivered, 1u);
  EXPECT_EQ(relay_->CountLogLines({"waiting for the database schema"}), 1u) << relay_->StderrTail();
  EXPECT_EQ(relay_->CountLogLines({"database schema migrated; starting work"}), 1u)
      << relay_->StderrTail();
  auto stopped = relay_->Stop(seconds(30));
  ASSERT_TRUE(stopped.has_value());
  EXPECT_EQ(stopped->exit_code, 0) << Describe(*stopped);
}

TEST_F(SchemaWaitTest, SigtermEndsTheWaitAtOnce) {
  ASSERT_TRUE(relay_->Start());
  ASSERT_TRUE(Eventually([&] { return Get(port_, "/readyz").status == 503; }, seconds(20)))
      << relay_->StderrTail();
  const auto sent = std::chrono::steady_clock::now();
  ASSERT_TRUE(relay_->Signal(SIGTERM));
  // Well before the next schema check: the sleep between checks ends on the signal.
  auto stopped = relay_->Wait(relay::kSchemaRecheckInterval);
  ASSERT_TRUE(stopped.has_value())
      << "still running " << relay::kSchemaRecheckInterval.count() << "ms after SIGTERM\n"
      << relay_->StderrTail();
  EXPECT_EQ(stopped->exit_code, 0) << Describe(*stopped) << "\n" << relay_->StderrTail();
  EXPECT_LT(std::chrono::steady_clock::now() - sent, relay::kSchemaRecheckInterval);
}

}  // namespace
}  // namespace room_outbox::testing
