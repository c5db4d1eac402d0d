// [tencent_im.max_age_by_type] as processes: a real relay against the private MariaDB and the
// fake IM server parks rows older than their type's max age (on the database server's clock) as
// expired when their turn comes, `show` reports the reason, `requeue` makes them pending and they
// are then delivered (never expired again); other types and young rows are delivered as usual.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "support/fake_im_server.h"
#include "support/relay_command.h"
#include "support/relay_process.h"
#include "support/test_database.h"
#include "support/test_rows.h"
#include "support/wait.h"

namespace room_outbox::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

class ExpiryDaemonTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(db_.valid());
    ASSERT_TRUE(im_.running()) << im_.start_error();
  }

  // A pending row committed `age_ms` before the server's now (its created_at_ms on the server's
  // clock, as the hook writes it, moved into the past), due at once.
  void InsertAged(const std::string& id, const std::string& type, const std::string& room,
                  int64_t seq, int64_t age_ms) {
    const std::string created = std::string(kServerNowSql) + " - " + std::to_string(age_ms);
    db_.Exec(
        "INSERT INTO room_outbox (event_id, event_type, room_id, command_id, request_id, "
        "envelope, status, retry_count, next_attempt_at_ms, created_at_ms, updated_at_ms) "
        "VALUES (" +
        SqlQuote(id) + ", " + SqlQuote(type) + ", " + SqlQuote(room) + ", " +
        SqlQuote("cmd-" + id) + ", " + SqlQuote("req-" + id) + ", " +
        SqlQuote(TestEnvelope(id, room, seq, "expiry-test")) + ", 'pending', 0, 0, " + created +
        ", " + created + ")");
  }
  std::string Column(const std::string& event_id, const std::string& column) {
    auto rows =
        db_.Query("SELECT " + column + " FROM room_outbox WHERE event_id = " + SqlQuote(event_id));
    return rows.empty() || !rows[0][0] ? "" : *rows[0][0];
  }
  int64_t Count(const std::string& where) {
    return db_.Scalar("SELECT COUNT(*) FROM room_outbox WHERE " + where);
  }
  CommandResult Ops(std::vector<std::string> args) {
    args.push_back("--config");
    args.push_back(relay_->config_path());
    return RunRelayCommand(args);
  }
  void StartRelay() {
    RelayProcessOptions options;
    options.node_id = "expiry-test-relay";
    options.log_level = "debug";
    options.outbox_worker = {{"poll_interval", "\"200ms\""}, {"lease", "\"10s\""}};
    options.tencent_im = {{"max_age_by_type", "{ RoomGiftSent = \"60s\" }"}};
    relay_ = std::make_unique<RelayProcess>(db_, im_, std::move(options));
    ASSERT_TRUE(relay_->Start());
  }

  TestDatabase db_;
  FakeImServer im_;
  std::unique_ptr<RelayProcess> relay_;
};

TEST_F(ExpiryDaemonTest, OldRowsAreParkedAsExpiredAndRequeueDeliversThem) {
  // Room "storm": two gifts an hour old, then a young one. Room "other": an hour-old event of a
  // type without a max age. Room "fresh": a young gift.
  InsertAged("storm-1", "RoomGiftSent", "storm", 1, 3'600'000);
  InsertAged("storm-2", "RoomGiftSent", "storm", 2, 3'600'000);
  InsertAged("storm-3", "RoomGiftSent", "storm", 3, 1000);
  InsertAged("other-1", "RoomUserJoined", "other", 1, 3'600'000);
  InsertAged("fresh-1", "RoomGiftSent", "fresh", 1, 0);
  StartRelay();
  // The sent rows' marks and the expired rows' parks are two statements: wait for both.
  ASSERT_TRUE(Eventually(
      [&] {
        return Count("status = 'published'") == 3 &&
               Count("status = 'parked' AND last_error = 'expired'") == 2;
      },
      seconds(30)))
      << relay_->StderrTail();
  EXPECT_EQ(Count("status = 'pending'"), 0);
  for (const char* id : {"storm-1", "storm-2"}) {
    EXPECT_EQ(Column(id, "status"), "parked") << id;
    EXPECT_EQ(Column(id, "retry_count"), "0") << id;  // no attempt was made
    EXPECT_TRUE(im_.RequestsFor(id).empty()) << id;
  }
  for (const char* id : {"storm-3", "other-1", "fresh-1"}) {
    EXPECT_EQ(im_.RequestsFor(id).size(), 1u) << id;
  }
  EXPECT_EQ(relay_->CountLogLines({"outbox event expired", "status=parked", "error=expired"}), 2u)
      << relay_->StderrTail();

  CommandResult show = Ops({"show", "storm-1"});
  ASSERT_EQ(show.exit_code, 0) << show.Describe();
  EXPECT_EQ(show.Json()["status"], "parked") << show.Describe();
  EXPECT_EQ(show.Json()["last_error"], "expired") << show.Describe();

  // Requeued by the operator: pending again, then sent (never expired a second time).
  CommandResult requeue = Ops({"requeue", "--room", "storm"});
  ASSERT_EQ(requeue.exit_code, 0) << requeue.Describe();
  EXPECT_EQ(requeue.Json()["requeued"], 2) << requeue.Describe();
  ASSERT_TRUE(Eventually([&] { return Count("status = 'published'") == 5; }, seconds(30)))
      << relay_->StderrTail();
  EXPECT_EQ(im_.RequestsFor("storm-1").size(), 1u);
  EXPECT_EQ(im_.RequestsFor("storm-2").size(), 1u);
  EXPECT_EQ(relay_->CountLogLines({"outbox event expired"}), 2u) << relay_->StderrTail();
  auto exit = relay_->Stop(seconds(20));
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->exit_code, 0) << Describe(*exit);
}

}  // namespace
}  // namespace room_outbox::testing
