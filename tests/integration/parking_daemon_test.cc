// The park policy's worker side as processes: park_permanent_after against a fake IM that answers
// 10010 for one room's group, requeue --room afterwards, the original specification's unbounded
// retry with the default 0, the log volume of an IM outage, a SIGHUP that brings a new
// IM secret key, and MariaDbRelayStore::MarkParked itself.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <memory>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/envelope_codec.h"
#include "store/mariadb_relay_store.h"
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
using ::testing::HasSubstr;
using SteadyClock = std::chrono::steady_clock;

std::string EnvelopeOf(const std::string& event_id, const std::string& room_id, int64_t seq) {
  return TestEnvelope(event_id, room_id, seq, "parking-test");
}

// Lines of `log` whose level (the word after the timestamp) is `level` and that contain `text`.
size_t LinesAt(const std::string& log, const std::string& level, const std::string& text = "") {
  const std::regex at("^\\S+ " + level + " ");
  std::istringstream in(log);
  std::string line;
  size_t n = 0;
  while (std::getline(in, line)) {
    if (std::regex_search(line, at) && line.find(text) != std::string::npos) ++n;
  }
  return n;
}

class ParkingDaemonTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(db_.valid());
    ASSERT_TRUE(im_.running()) << im_.start_error();
  }

  RelayProcessOptions Options(const std::string& park_permanent_after) {
    RelayProcessOptions options;
    options.node_id = "parking-test-relay";
    options.log_level = "debug";
    options.outbox_worker = {{"poll_interval", "\"200ms\""}, {"lease", "\"10s\""}};
    if (!park_permanent_after.empty()) {
      options.outbox_worker["park_permanent_after"] = park_permanent_after;
    }
    return options;
  }
  void StartRelay(RelayProcessOptions options) {
    relay_ = std::make_unique<RelayProcess>(db_, im_, std::move(options));
    ASSERT_TRUE(relay_->Start());
  }

  // Pending rows of `room`, room_seq 1..count, event ids "<room>-<i>".
  void InsertPending(const std::string& room, int count) {
    for (int i = 1; i <= count; ++i) {
      const std::string id = room + "-" + std::to_string(i);
      db_.Exec(
          "INSERT INTO room_outbox (event_id, event_type, room_id, command_id, request_id, "
          "envelope, status, retry_count, next_attempt_at_ms, created_at_ms, updated_at_ms) "
          "VALUES (" +
          SqlQuote(id) + ", 'RoomGiftSent', " + SqlQuote(room) + ", " + SqlQuote("cmd-" + id) +
          ", " + SqlQuote("req-" + id) + ", " + SqlQuote(EnvelopeOf(id, room, i)) +
          ", 'pending', 0, 0, " + kServerNowSql + ", " + kServerNowSql + ")");
    }
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

  TestDatabase db_;
  FakeImServer im_;
  std::unique_ptr<RelayProcess> relay_;
};

TEST_F(ParkingDaemonTest, PermanentFailuresOfOneRoomParkInOrderAndRequeueDeliversThem) {
  // IM answers 10010 (group dissolved) for every message to room "gone"; rooms "live-a" and
  // "live-b" deliver.
  im_.SetGroupFault("gone", FakeImFault::ImError(10010, "group not found or dissolved"));
  InsertPending("gone", 3);
  InsertPending("live-a", 2);
  InsertPending("live-b", 2);
  StartRelay(Options("3"));
  ASSERT_TRUE(
      Eventually([&] { return Count("room_id = 'gone' AND status = 'parked'") == 3; }, seconds(60)))
      << relay_->StderrTail();
  EXPECT_TRUE(Eventually([&] { return Count("status = 'published'") == 4; }, seconds(30)))
      << relay_->StderrTail();
  EXPECT_EQ(Count("status = 'pending'"), 0);

  // Each row of the room was tried exactly 3 times, head first: a row's attempts all come after
  // the previous row was parked (per-room order), then the row is parked with its last error.
  SteadyClock::time_point previous_last{};
  for (int i = 1; i <= 3; ++i) {
    const std::string id = "gone-" + std::to_string(i);
    const std::vector<FakeImRequest> tries = im_.RequestsFor(id);
    ASSERT_EQ(tries.size(), 3u) << id << "\n" << relay_->StderrTail();
    EXPECT_GT(tries.front().arrived, previous_last) << id << " overtook the row before it";
    previous_last = tries.back().arrived;
    EXPECT_EQ(Column(id, "retry_count"), "3") << id;
    EXPECT_THAT(Column(id, "last_error"), HasSubstr("10010")) << id;
    EXPECT_NE(Column(id, "parked_at_ms"), "") << id;
  }
  // Logged once per row, at error, naming the setting.
  EXPECT_EQ(LinesAt(relay_->Stderr(), "error", "outbox event parked"), 3u) << relay_->StderrTail();
  EXPECT_EQ(relay_->CountLogLines({"outbox event parked", "status=parked", "parked_after=3"}), 3u);
  // The parked rows are left alone.
  std::this_thread::sleep_for(milliseconds(600));
  EXPECT_EQ(im_.RequestsFor("gone-1").size(), 3u);

  // IM accepts the group again; the operator requeues the room: delivered, retry_count kept.
  im_.SetGroupFault("gone", std::nullopt);
  CommandResult requeue = Ops({"requeue", "--room", "gone"});
  ASSERT_EQ(requeue.exit_code, 0) << requeue.Describe();
  EXPECT_EQ(requeue.Json()["requeued"], 3) << requeue.Describe();
  ASSERT_TRUE(Eventually([&] { return Count("status = 'published'") == 7; }, seconds(30)))
      << relay_->StderrTail();
  EXPECT_EQ(Column("gone-1", "retry_count"), "3");
  EXPECT_EQ(relay_->CountLogLines({"outbox event published after failures", "room_id=gone"}), 3u)
      << relay_->StderrTail();
  auto exit = relay_->Stop(seconds(20));
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->exit_code, 0) << Describe(*exit);
}

TEST_F(ParkingDaemonTest, WithTheDefaultZeroTheRowsStayPendingAndRetry) {
  im_.SetGroupFault("gone", FakeImFault::ImError(10010, "group not found or dissolved"));
  InsertPending("gone", 3);
  InsertPending("live", 2);
  StartRelay(Options(""));  // park_permanent_after not set: 0
  ASSERT_TRUE(Eventually([&] { return Count("status = 'published'") == 2; }, seconds(30)))
      << relay_->StderrTail();
  // Retried past any park threshold a test would pick, and never parked (the original
  // specification's unbounded retry).
  ASSERT_TRUE(Eventually(
      [&] {
        return db_.Scalar("SELECT retry_count FROM room_outbox WHERE event_id = 'gone-1'") >= 5;
      },
      seconds(30)))
      << relay_->StderrTail();
  EXPECT_EQ(Count("status = 'parked'"), 0);
  EXPECT_EQ(Count("room_id = 'gone' AND status = 'pending'"), 3);
  // The later rows wait behind the head (per-room order).
  EXPECT_TRUE(im_.RequestsFor("gone-2").empty());
  EXPECT_EQ(relay_->CountLogLines({"outbox event parked"}), 0u);
  // The first failure at error (a permanent one), the rest at debug; the relay writes the line of
  // an attempt after its mark, so the log is read once it has the lines of the marks seen above.
  ASSERT_TRUE(Eventually(
      [&] { return LinesAt(relay_->Stderr(), "debug", "outbox event failed") >= 4; }, seconds(30)))
      << relay_->StderrTail();
  const std::string log = relay_->Stderr();
  EXPECT_EQ(LinesAt(log, "error", "outbox event failed"), 1u) << relay_->StderrTail();
  EXPECT_GE(LinesAt(log, "debug", "outbox event failed"), 4u) << relay_->StderrTail();
  // The room entered the held state once.
  EXPECT_EQ(LinesAt(log, "info", "room held back by a failing head row"), 1u)
      << relay_->StderrTail();
}

// IM down for a few seconds (answering 10002) with 20 rooms of 3 pending rows each, then up.
// Each row's first failure warns once, and each round with failures writes one summary line (not
// a warn line per attempt and per held room, which would be 2 x 20 lines per round here).
TEST_F(ParkingDaemonTest, AnImOutageLogsFirstFailuresAndOneSummaryPerRound) {
  constexpr int kRooms = 20;
  constexpr milliseconds kOutage{6000};
  constexpr milliseconds kPoll{500};
  for (int r = 1; r <= kRooms; ++r) InsertPending("room-" + std::to_string(r), 3);
  ASSERT_TRUE(im_.SetMode("down"));
  RelayProcessOptions options = Options("");
  options.outbox_worker["poll_interval"] = "\"500ms\"";
  StartRelay(options);
  std::this_thread::sleep_for(kOutage);
  ASSERT_TRUE(im_.SetMode("up"));
  ASSERT_TRUE(Eventually([&] { return Count("status = 'published'") == 3 * kRooms; }, seconds(60)))
      << relay_->StderrTail();
  auto exit = relay_->Stop(seconds(20));
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->exit_code, 0) << Describe(*exit);

  const std::string log = relay_->Stderr();
  const size_t warn = LinesAt(log, "warning");
  const size_t first_failures = LinesAt(log, "warning", "outbox event failed");
  const size_t summaries = LinesAt(log, "warning", "outbox round had failures");
  const size_t failure_lines = LinesAt(log, "(warning|debug)", "outbox event failed");
  const size_t held_lines = LinesAt(log, "(info|debug)", "room held back by a failing head row");
  // Rounds with failed attempts, from the per-round debug line.
  size_t failing_rounds = 0;
  {
    const std::regex round_line("^\\S+ debug outbox round .* failed=([1-9][0-9]*) ");
    std::istringstream in(log);
    std::string line;
    while (std::getline(in, line)) failing_rounds += std::regex_search(line, round_line) ? 1 : 0;
  }
  std::printf(
      "outage of %lld ms, %d rooms: %zu warn lines (%zu first failures + %zu round summaries); "
      "before: %zu failure lines + %zu held-room lines, all at warn\n",
      static_cast<long long>(kOutage.count()), kRooms, warn, first_failures, summaries,
      failure_lines, held_lines);
  // Every head failed once first: one warn line each; no row of a held room was tried.
  EXPECT_EQ(first_failures, static_cast<size_t>(kRooms)) << relay_->StderrTail(80);
  EXPECT_EQ(summaries, failing_rounds);
  EXPECT_LE(warn, first_failures + summaries) << relay_->StderrTail(80);
  // Rounds come every poll_interval at most: the outage bounds them.
  EXPECT_LE(failing_rounds, static_cast<size_t>(kOutage / kPoll) + 4);
  EXPECT_GE(failing_rounds, 3u);
  // The per-attempt count of before is far above.
  EXPECT_GE(failure_lines, 3u * kRooms);
  // Entering the held state: once per room at info; the repeats at debug.
  EXPECT_EQ(LinesAt(log, "info", "room held back by a failing head row"),
            static_cast<size_t>(kRooms));
  // Once IM is back: one recovery line per head, one "room released" per room.
  EXPECT_EQ(LinesAt(log, "info", "outbox event published after failures"),
            static_cast<size_t>(kRooms))
      << relay_->StderrTail(80);
  EXPECT_EQ(LinesAt(log, "info", "room released"), static_cast<size_t>(kRooms));
}

TEST_F(ParkingDaemonTest, SighupBringsANewSecretKeyToThePublisher) {
  InsertPending("keyed", 2);
  RelayProcessOptions options = Options("");
  options.secret_key = "an-old-key-that-im-no-longer-accepts";
  options.tencent_im = {{"breaker_cooldown", "\"500ms\""}};
  StartRelay(options);
  // The fake verifies every UserSig: HMAC mismatch (70009), an app-scope error.
  ASSERT_TRUE(Eventually([&] { return !im_.Rejections().empty(); }, seconds(30)))
      << relay_->StderrTail();
  EXPECT_EQ(Count("status = 'published'"), 0);

  std::ofstream(relay_->dir() + "/tim-secret-key", std::ios::trunc) << im_.options().secret_key;
  ASSERT_TRUE(relay_->Signal(SIGHUP));
  ASSERT_TRUE(Eventually([&] { return Count("status = 'published'") == 2; }, seconds(30)))
      << relay_->StderrTail();
  EXPECT_EQ(relay_->CountLogLines({"configuration reloaded", "im_secret_key=\"changed, applied\""}),
            1u)
      << relay_->StderrTail();
  // Signed with the new key: the fake accepted them.
  for (const char* id : {"keyed-1", "keyed-2"}) {
    EXPECT_FALSE(im_.RequestsFor(id).empty()) << id;
  }
  EXPECT_TRUE(relay_->Alive());
  auto exit = relay_->Stop(seconds(20));
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->exit_code, 0) << Describe(*exit);
}

TEST_F(ParkingDaemonTest, MarkParkedParksOnlyRowsTheClaimHolds) {
  InsertPending("store", 2);
  relay::MariaDbRelayStore store(db_.Options());
  relay::ClaimOptions claim_options;
  claim_options.limit = 10;
  auto claim = store.ClaimDue(claim_options);
  ASSERT_TRUE(claim) << claim.error().message;
  ASSERT_EQ(claim->rows.size(), 2u);
  const int64_t head = claim->rows[0].id;
  const std::vector<relay::FailedAttempt> attempt{{head, "permanent: im error 10010", 0}};
  auto stale = store.MarkParked("not-the-token", attempt);
  ASSERT_TRUE(stale) << stale.error().message;
  EXPECT_EQ(*stale, 0u);
  EXPECT_EQ(Column("store-1", "status"), "pending");

  const std::vector<relay::FailedAttempt> both{{head, "permanent: im error 10010", 0},
                                               {claim->rows[1].id, "undecodable envelope: x", 0}};
  auto parked = store.MarkParked(claim->token, both);
  ASSERT_TRUE(parked) << parked.error().message;
  EXPECT_EQ(*parked, 2u);
  EXPECT_EQ(Column("store-1", "status"), "parked");
  EXPECT_EQ(Column("store-1", "retry_count"), "1");
  EXPECT_EQ(Column("store-1", "last_error"), "permanent: im error 10010");
  EXPECT_EQ(Column("store-2", "last_error"), "undecodable envelope: x");
  EXPECT_NE(Column("store-1", "parked_at_ms"), "");
  EXPECT_EQ(Column("store-1", "claim_token"), "");
  // Once parked, never again, and never claimed.
  auto again = store.MarkParked(claim->token, attempt);
  ASSERT_TRUE(again);
  EXPECT_EQ(*again, 0u);
  auto next = store.ClaimDue(claim_options);
  ASSERT_TRUE(next);
  EXPECT_TRUE(next->rows.empty());
}

}  // namespace
}  // namespace room_outbox::testing
