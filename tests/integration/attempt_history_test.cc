// A row's attempt history (schema 011) as processes: a real relay against the private MariaDB
// and the fake IM server records each attempt of a row in the statement that marks it, and
// `outbox-relay show` prints them with the waits between them; the column keeps the last 16 and
// attempt_count all of them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "support/fake_im_server.h"
#include "support/relay_command.h"
#include "support/relay_process.h"
#include "support/test_database.h"
#include "support/test_rows.h"
#include "support/wait.h"

namespace room_outbox::testing {
namespace {

using std::chrono::seconds;

constexpr const char* kNode = "history-relay";

class AttemptHistoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(db_.valid());
    ASSERT_TRUE(im_.running()) << im_.start_error();
  }

  void Insert(const std::string& id, const std::string& room, int64_t seq) {
    db_.Exec(
        "INSERT INTO room_outbox (event_id, event_type, room_id, command_id, request_id, "
        "envelope, status, retry_count, next_attempt_at_ms, created_at_ms, updated_at_ms) "
        "VALUES (" +
        SqlQuote(id) + ", 'RoomGiftSent', " + SqlQuote(room) + ", " + SqlQuote("cmd-" + id) + ", " +
        SqlQuote("req-" + id) + ", " + SqlQuote(TestEnvelope(id, room, seq, "history-test")) +
        ", 'pending', 0, 0, " + kServerNowSql + ", " + kServerNowSql + ")");
  }
  int64_t Count(const std::string& where) {
    return db_.Scalar("SELECT COUNT(*) FROM room_outbox WHERE " + where);
  }
  void StartRelay(const std::string& poll_interval) {
    RelayProcessOptions options;
    options.node_id = kNode;
    options.outbox_worker = {{"poll_interval", "\"" + poll_interval + "\""}, {"lease", "\"10s\""}};
    relay_ = std::make_unique<RelayProcess>(db_, im_, std::move(options));
    ASSERT_TRUE(relay_->Start());
  }
  nlohmann::json Show(const std::string& event_id) {
    CommandResult show = RunRelayCommand({"show", event_id, "--config", relay_->config_path()});
    EXPECT_EQ(show.exit_code, 0) << show.Describe();
    return show.Json();
  }
  void StopRelay() {
    auto exit = relay_->Stop(seconds(20));
    ASSERT_TRUE(exit);
    EXPECT_EQ(exit->exit_code, 0) << Describe(*exit);
  }

  TestDatabase db_;
  FakeImServer im_;
  std::unique_ptr<RelayProcess> relay_;
};

TEST_F(AttemptHistoryTest, ShowTellsEachAttemptOfALateEventAndTheWaitsBetween) {
  Insert("late-1", "history-room", 1);
  Insert("clean-1", "other-room", 1);
  im_.PushFaultForEvent("late-1", FakeImFault::HttpStatus(503));
  im_.PushFaultForEvent("late-1", FakeImFault::ImError(10002, "busy"));
  StartRelay("300ms");
  ASSERT_TRUE(Eventually([&] { return Count("status = 'published'") == 2; }, seconds(30)))
      << relay_->StderrTail();

  const nlohmann::json late = Show("late-1");
  ASSERT_EQ(late["attempt_count"], 3) << late.dump();
  const nlohmann::json& attempts = late["attempts"];
  ASSERT_EQ(attempts.size(), 3u) << late.dump();
  EXPECT_EQ(attempts[0]["outcome"], "retryable") << late.dump();
  EXPECT_EQ(attempts[0]["detail"], "http 503") << late.dump();
  EXPECT_EQ(attempts[1]["outcome"], "retryable") << late.dump();
  EXPECT_EQ(attempts[1]["detail"], "im 10002") << late.dump();
  EXPECT_EQ(attempts[2]["outcome"], "published") << late.dump();
  EXPECT_EQ(attempts[2]["detail"], "http 200") << late.dump();
  int64_t before = late["created_at_ms"].get<int64_t>();
  for (const nlohmann::json& a : attempts) {
    EXPECT_EQ(a["node_id"], kNode) << late.dump();
    EXPECT_EQ(a["pack_events"], 1) << late.dump();
    EXPECT_GE(a["latency_ms"].get<int64_t>(), 0) << late.dump();
    // On the database server's clock, after the commit and in order.
    EXPECT_GE(a["at_ms"].get<int64_t>(), before) << late.dump();
    ASSERT_TRUE(a["waited_ms"].is_number()) << late.dump();
    before = a["at_ms"].get<int64_t>();
  }
  EXPECT_LE(before, late["published_at_ms"].get<int64_t>()) << late.dump();
  // A failed attempt's row is due again a retry interval (poll_interval) after its mark: the
  // next attempt waited at least that long less the time from the answer to the mark.
  EXPECT_GE(attempts[1]["waited_ms"].get<int64_t>(), 150) << late.dump();
  EXPECT_GE(attempts[2]["waited_ms"].get<int64_t>(), 150) << late.dump();

  const nlohmann::json clean = Show("clean-1");
  ASSERT_EQ(clean["attempt_count"], 1) << clean.dump();
  EXPECT_EQ(clean["attempts"][0]["outcome"], "published") << clean.dump();
  StopRelay();
}

TEST_F(AttemptHistoryTest, TheRowKeepsTheLastSixteenAttemptsAndCountsThemAll) {
  Insert("stubborn-1", "stubborn-room", 1);
  constexpr int kFailures = 19;
  for (int i = 0; i < kFailures; ++i) {
    im_.PushFaultForEvent("stubborn-1", FakeImFault::HttpStatus(500 + i % 4));
  }
  StartRelay("50ms");
  ASSERT_TRUE(Eventually([&] { return Count("status = 'published'") == 1; }, seconds(60)))
      << relay_->StderrTail();
  EXPECT_EQ(im_.RequestsFor("stubborn-1").size(), static_cast<size_t>(kFailures + 1));

  const nlohmann::json row = Show("stubborn-1");
  EXPECT_EQ(row["retry_count"], kFailures) << row.dump();
  EXPECT_EQ(row["attempt_count"], kFailures + 1) << row.dump();
  const nlohmann::json& attempts = row["attempts"];
  ASSERT_EQ(attempts.size(), 16u) << row.dump();
  // The first four failures were cut: the oldest kept is the fifth (HTTP 500 + 4 % 4).
  EXPECT_EQ(attempts[0]["detail"], "http 500") << row.dump();
  EXPECT_TRUE(attempts[0]["waited_ms"].is_null()) << row.dump();
  EXPECT_EQ(attempts[1]["detail"], "http 501") << row.dump();
  EXPECT_EQ(attempts[15]["outcome"], "published") << row.dump();
  StopRelay();
}

}  // namespace
}  // namespace room_outbox::testing
