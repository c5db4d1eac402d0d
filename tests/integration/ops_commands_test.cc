// The operator subcommands (outbox-relay stats, show, park, requeue, purge) as processes against
// the test MariaDB, with a relay daemon delivering from the same outbox meanwhile.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "core/envelope_codec.h"
#include "core/mysql/connection.h"
#include "core/mysql/outbox_sql.h"
#include "ops/drain_rates.h"
#include "ops/ops_store.h"
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

constexpr int64_t kDayMs = 24LL * 3600 * 1000;

std::string EnvelopeOf(const std::string& event_id, const std::string& room_id, int64_t seq) {
  return TestEnvelope(event_id, room_id, seq, "ops-test");
}

class OpsCommandsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(db_.valid());
    ASSERT_TRUE(im_.running()) << im_.start_error();
  }

  // Starts a relay daemon on the test database (debug log, 200ms polls).
  void StartDaemon() {
    RelayProcessOptions options;
    options.node_id = "ops-test-relay";
    options.log_level = "debug";
    options.outbox_worker = {{"poll_interval", "\"200ms\""}, {"lease", "\"10s\""}};
    relay_ = std::make_unique<RelayProcess>(db_, im_, options);
    ASSERT_TRUE(relay_->Start());
  }
  // The daemon's config: the commands use its [mysql].
  std::string ConfigPath() {
    if (!relay_) {
      relay_ = std::make_unique<RelayProcess>(db_, im_, RelayProcessOptions{});
    }
    return relay_->config_path();
  }

  CommandResult Ops(std::vector<std::string> args) {
    args.push_back("--config");
    args.push_back(ConfigPath());
    return RunRelayCommand(args);
  }

  // Pending rows of `room`, room_seq 1..count, event ids "<room>-<i>".
  void InsertPending(const std::string& room, int count, const std::string& status = "pending") {
    for (int i = 1; i <= count; ++i) {
      const std::string id = room + "-" + std::to_string(i);
      db_.Exec(
          "INSERT INTO room_outbox (event_id, event_type, room_id, command_id, request_id, "
          "envelope, status, retry_count, next_attempt_at_ms, created_at_ms, updated_at_ms) "
          "VALUES (" +
          SqlQuote(id) + ", 'RoomGiftSent', " + SqlQuote(room) + ", " + SqlQuote("cmd-" + id) +
          ", " + SqlQuote("req-" + id) + ", " + SqlQuote(EnvelopeOf(id, room, i)) + ", " +
          SqlQuote(status) + ", 0, 0, " + kServerNowSql + ", " + kServerNowSql + ")");
    }
  }
  std::string StatusOf(const std::string& event_id) {
    auto rows = db_.Query("SELECT status FROM room_outbox WHERE event_id = " + SqlQuote(event_id));
    return rows.empty() || !rows[0][0] ? "" : *rows[0][0];
  }
  int64_t Count(const std::string& where) {
    return db_.Scalar("SELECT COUNT(*) FROM room_outbox WHERE " + where);
  }

  TestDatabase db_;
  FakeImServer im_;
  std::unique_ptr<RelayProcess> relay_;
};

TEST_F(OpsCommandsTest, StatsShowParkAndRequeueBesideARunningRelay) {
  // The head of room "stuck" fails permanently (10010: group dissolved); room "calm" delivers.
  im_.SetFaultFunction([](const FakeImRequest& r) -> std::optional<FakeImFault> {
    if (r.event_id == "stuck-1") return FakeImFault::ImError(10010, "group dissolved");
    return std::nullopt;
  });
  InsertPending("stuck", 3);
  InsertPending("calm", 4);
  StartDaemon();
  ASSERT_TRUE(Eventually([&] { return Count("status = 'published'") == 4; }, seconds(30)))
      << relay_->StderrTail();
  ASSERT_TRUE(Eventually(
      [&] {
        return db_.Scalar("SELECT retry_count FROM room_outbox WHERE event_id='stuck-1'") >= 2;
      },
      seconds(30)));

  // stats: the stuck room holds its two later rows back.
  CommandResult stats = Ops({"stats", "--window", "0s"});
  ASSERT_EQ(stats.exit_code, 0) << stats.Describe();
  nlohmann::json s = stats.Json();
  ASSERT_TRUE(s.is_object()) << stats.Describe();
  EXPECT_EQ(s["pending"], 3);
  EXPECT_EQ(s["parked"], 0);
  EXPECT_FALSE(s.contains("published")) << "stats reads no published row";
  EXPECT_GE(s["oldest_pending_age_ms"].get<int64_t>(), 0);
  EXPECT_EQ(s["rooms_held_back"], 1);
  EXPECT_EQ(s["rooms_pending"], 1);
  EXPECT_EQ(s["window_ms"], 0);
  EXPECT_TRUE(s["arrival_per_second"].is_null()) << "--window 0s: one reading, no rates";
  EXPECT_TRUE(s["drain_eta_seconds"].is_null());
  EXPECT_EQ(s["top_rooms_sort"], "oldest");
  EXPECT_EQ(s["top_rooms_cut"], false);
  ASSERT_EQ(s["top_rooms"].size(), 1u) << s.dump();
  EXPECT_EQ(s["top_rooms"][0]["room_id"], "stuck");
  EXPECT_EQ(s["top_rooms"][0]["pending"], 3);
  EXPECT_EQ(s["top_rooms"][0]["head_event_id"], "stuck-1");
  EXPECT_GE(s["top_rooms"][0]["head_retry_count"].get<int64_t>(), 2);
  EXPECT_THAT(s["top_rooms"][0]["head_last_error"].get<std::string>(), HasSubstr("10010"));

  // show: the row and its envelope as an object.
  CommandResult show = Ops({"show", "stuck-1"});
  ASSERT_EQ(show.exit_code, 0) << show.Describe();
  nlohmann::json row = show.Json();
  EXPECT_EQ(row["event_id"], "stuck-1");
  EXPECT_EQ(row["room_id"], "stuck");
  EXPECT_EQ(row["status"], "pending");
  EXPECT_TRUE(row["published_at_ms"].is_null());
  EXPECT_TRUE(row["envelope"].is_object()) << row.dump();
  EXPECT_EQ(row["envelope"]["event_id"], "stuck-1");
  for (const char* key : {"event_type", "retry_count", "last_error", "created_at_ms",
                          "updated_at_ms", "next_attempt_at_ms"}) {
    EXPECT_TRUE(row.contains(key)) << key;
  }

  // park: the head is set aside (retried while a relay holds it for a moment), its room's later
  // rows then go out.
  CommandResult park;
  ASSERT_TRUE(Eventually(
      [&] {
        park = Ops({"park", "stuck-1", "--reason", "group dissolved (ticket 42)"});
        return park.exit_code == 0;
      },
      seconds(20)))
      << park.Describe();
  EXPECT_EQ(park.Json()["status"], "parked");
  EXPECT_EQ(park.Json()["last_error"], "parked by operator: group dissolved (ticket 42)");
  ASSERT_TRUE(Eventually([&] { return Count("status = 'published'") == 6; }, seconds(30)))
      << relay_->StderrTail();
  EXPECT_EQ(StatusOf("stuck-1"), "parked");
  const int64_t retries =
      db_.Scalar("SELECT retry_count FROM room_outbox WHERE event_id='stuck-1'");
  std::this_thread::sleep_for(milliseconds(600));  // three polls: the relay leaves it alone
  EXPECT_EQ(StatusOf("stuck-1"), "parked");
  EXPECT_EQ(db_.Scalar("SELECT retry_count FROM room_outbox WHERE event_id='stuck-1'"), retries);
  CommandResult parked_stats = Ops({"stats", "--window", "0s"});
  EXPECT_EQ(parked_stats.Json()["parked"], 1) << parked_stats.Describe();
  EXPECT_EQ(parked_stats.Json()["pending"], 0);

  // A published row cannot be parked; an unknown event is a runtime failure.
  CommandResult again = Ops({"park", "calm-1", "--reason", "x"});
  EXPECT_EQ(again.exit_code, 1) << again.Describe();
  EXPECT_THAT(again.err, HasSubstr("not pending"));
  CommandResult unknown = Ops({"park", "no-such-event", "--reason", "x"});
  EXPECT_EQ(unknown.exit_code, 1) << unknown.Describe();
  EXPECT_EQ(unknown.Json()["code"], "not_found") << unknown.Describe();

  // requeue EVENT_ID once IM accepts: delivered, retry_count kept.
  im_.SetFaultFunction(nullptr);
  CommandResult requeue = Ops({"requeue", "stuck-1"});
  ASSERT_EQ(requeue.exit_code, 0) << requeue.Describe();
  EXPECT_EQ(requeue.Json()["requeued"], 1);
  ASSERT_TRUE(Eventually([&] { return StatusOf("stuck-1") == "published"; }, seconds(30)))
      << relay_->StderrTail();
  EXPECT_EQ(db_.Scalar("SELECT retry_count FROM room_outbox WHERE event_id='stuck-1'"), retries);
  CommandResult not_parked = Ops({"requeue", "stuck-1"});
  EXPECT_EQ(not_parked.exit_code, 1) << not_parked.Describe();
}

// stats reads the pending and parked rows, never a published one: with 3,000 published rows its
// statements read about as many rows as the backlog holds. The top rooms come by backlog or by
// the oldest head, and say when the list was cut.
TEST_F(OpsCommandsTest, StatsReadsNoPublishedRowAndSortsTheRoomsByBacklog) {
  db_.Exec(
      "INSERT INTO room_outbox (event_id, event_type, room_id, command_id, envelope, status, "
      "created_at_ms, updated_at_ms, published_at_ms) SELECT CONCAT('done-', seq), "
      "'RoomGiftSent', CONCAT('done-room-', seq % 50), CONCAT('cmd-done-', seq), '{}', "
      "'published', " +
      std::string(kServerNowSql) + ", " + kServerNowSql + ", " + kServerNowSql +
      " FROM seq_1_to_3000");
  InsertPending("room-a", 5);
  InsertPending("room-b", 2);
  InsertPending("room-c", 8);
  InsertPending("room-p", 1, "parked");
  auto store = relay::ops::OpsStore::Connect(db_.Options());
  ASSERT_TRUE(store) << store.error().message;
  relay::ops::OpsStore& ops = **store;
  auto before = ops.RowsRead();
  auto counter_cost = ops.RowsRead();  // what reading the counters costs itself
  ASSERT_TRUE(before && counter_cost);

  auto by_backlog = ops.Stats(2, relay::ops::RoomOrder::kLargestBacklog);
  auto sample = ops.Sample();
  auto after = ops.RowsRead();
  ASSERT_TRUE(by_backlog && sample && after);
  const int64_t rows_read = *after - *counter_cost - (*counter_cost - *before);
  EXPECT_LT(rows_read, 200) << "stats read " << rows_read << " rows beside 3,000 published ones";
  EXPECT_EQ(by_backlog->pending, 15);
  EXPECT_EQ(by_backlog->parked, 1);
  EXPECT_EQ(by_backlog->rooms_pending, 3);
  ASSERT_EQ(by_backlog->top_rooms.size(), 2u);
  EXPECT_EQ(by_backlog->top_rooms[0].room_id, "room-c");
  EXPECT_EQ(by_backlog->top_rooms[0].pending, 8);
  EXPECT_EQ(by_backlog->top_rooms[1].room_id, "room-a");
  EXPECT_EQ(sample->pending, 15);
  EXPECT_EQ(sample->max_id, db_.Scalar("SELECT MAX(id) FROM room_outbox"));

  auto by_age = ops.Stats(2, relay::ops::RoomOrder::kOldestHead);
  ASSERT_TRUE(by_age);
  ASSERT_EQ(by_age->top_rooms.size(), 2u);
  EXPECT_EQ(by_age->top_rooms[0].room_id, "room-a");  // its head was inserted first
  EXPECT_EQ(by_age->top_rooms[1].room_id, "room-b");
  auto none = ops.Stats(0);
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->top_rooms.empty());
  EXPECT_EQ(none->rooms_pending, 3) << "counted with --top 0 too";

  CommandResult cut = Ops({"stats", "--top", "1", "--sort", "backlog", "--window", "0s"});
  ASSERT_EQ(cut.exit_code, 0) << cut.Describe();
  EXPECT_EQ(cut.Json()["top_rooms_sort"], "backlog");
  EXPECT_EQ(cut.Json()["top_rooms_cut"], true);
  ASSERT_EQ(cut.Json()["top_rooms"].size(), 1u);
  EXPECT_EQ(cut.Json()["top_rooms"][0]["room_id"], "room-c");
}

// Two readings of the highest id and the pending count give the rows that arrived and the rows
// that left pending between them, whoever inserted or delivered them.
TEST_F(OpsCommandsTest, TwoSamplesGiveTheArrivalsAndDeliveriesBetweenThem) {
  InsertPending("drain-a", 10);
  auto store = relay::ops::OpsStore::Connect(db_.Options());
  ASSERT_TRUE(store) << store.error().message;
  auto first = (*store)->Sample();
  ASSERT_TRUE(first) << first.error().message;

  InsertPending("drain-b", 4);  // 4 arrive
  db_.Exec(
      "UPDATE room_outbox SET status = 'published' WHERE room_id = 'drain-a' ORDER BY id "
      "LIMIT 6");  // 6 are delivered
  core::Result<relay::ops::OutboxSample> second = core::Fail(ErrorCode::kInternal, "not read");
  ASSERT_TRUE(Eventually(
      [&] {
        second = (*store)->Sample();
        return second && second->server_now_ms > first->server_now_ms;
      },
      seconds(5)));

  const relay::ops::DrainRates rates = relay::ops::RatesBetween(*first, *second);
  EXPECT_EQ(rates.arrived, 4);
  EXPECT_EQ(rates.delivered, 6);
  EXPECT_EQ(second->pending, 8);
  EXPECT_GT(rates.window_ms, 0);
  ASSERT_TRUE(rates.drain_eta_seconds.has_value()) << "the backlog shrank";
  EXPECT_GT(*rates.drain_eta_seconds, 0.0);
}

// The command measures over --window and prints the rates and the ETA.
TEST_F(OpsCommandsTest, StatsPrintsTheRatesMeasuredOverItsWindow) {
  InsertPending("window-a", 3);
  CommandResult stats = Ops({"stats", "--window", "1s"});
  ASSERT_EQ(stats.exit_code, 0) << stats.Describe();
  nlohmann::json s = stats.Json();
  EXPECT_GE(s["window_ms"].get<int64_t>(), 900) << s.dump();
  EXPECT_TRUE(s["arrival_per_second"].is_number()) << s.dump();
  EXPECT_TRUE(s["delivery_per_second"].is_number()) << s.dump();
  EXPECT_TRUE(s["drain_eta_seconds"].is_null()) << "nothing drained: no ETA\n" << s.dump();
  EXPECT_EQ(s["pending"], 3);
}

TEST_F(OpsCommandsTest, RequeueByRoomAndAllParked) {
  InsertPending("room-a", 3, "parked");
  InsertPending("room-b", 2, "parked");
  StartDaemon();
  std::this_thread::sleep_for(milliseconds(500));
  EXPECT_EQ(Count("status = 'parked'"), 5) << "the relay never claims parked rows";

  CommandResult by_room = Ops({"requeue", "--room", "room-a"});
  ASSERT_EQ(by_room.exit_code, 0) << by_room.Describe();
  EXPECT_EQ(by_room.Json()["requeued"], 3);
  ASSERT_TRUE(Eventually([&] { return Count("room_id='room-a' AND status='published'") == 3; },
                         seconds(30)))
      << relay_->StderrTail();
  EXPECT_EQ(Count("room_id='room-b' AND status='parked'"), 2);

  CommandResult all = Ops({"requeue", "--all-parked", "--batch-size", "1"});
  ASSERT_EQ(all.exit_code, 0) << all.Describe();
  EXPECT_EQ(all.Json()["requeued"], 2);
  ASSERT_TRUE(Eventually([&] { return Count("status='published'") == 5; }, seconds(30)));
  CommandResult none = Ops({"requeue", "--all-parked"});
  EXPECT_EQ(none.exit_code, 0) << none.Describe();
  EXPECT_EQ(none.Json()["requeued"], 0);
}

TEST_F(OpsCommandsTest, ParkRefusesARowARelayHoldsRightNow) {
  InsertPending("held", 1);
  // A claim holding the row with a lease far in the future (server clock).
  db_.Exec(
      std::string("UPDATE room_outbox SET claim_token = 'other-relay', next_attempt_at_ms = ") +
      kServerNowSql + " + 600000 WHERE event_id = 'held-1'");
  CommandResult park = Ops({"park", "held-1", "--reason", "x"});
  EXPECT_EQ(park.exit_code, 1) << park.Describe();
  EXPECT_THAT(park.err, HasSubstr("being sent by a relay"));
  EXPECT_EQ(park.Json()["code"], "aborted");
  EXPECT_EQ(StatusOf("held-1"), "pending");
  EXPECT_EQ(db_.Scalar("SELECT COUNT(*) FROM room_outbox WHERE claim_token = 'other-relay'"), 1);
  CommandResult show = Ops({"show", "held-1"});
  EXPECT_EQ(show.Json()["leased"], true) << show.Describe();

  // Once the lease is over the row is parked (and the stale token cleared).
  db_.Exec(std::string("UPDATE room_outbox SET next_attempt_at_ms = ") + kServerNowSql +
           " - 1 WHERE event_id = 'held-1'");
  CommandResult later = Ops({"park", "held-1", "--reason", "x"});
  EXPECT_EQ(later.exit_code, 0) << later.Describe();
  EXPECT_EQ(StatusOf("held-1"), "parked");
  EXPECT_EQ(db_.Scalar("SELECT COUNT(*) FROM room_outbox WHERE claim_token IS NOT NULL"), 0);
}

// The room schedule keeps a row per room that ever had pending rows; a room without any is idle
// (due_at_ms = the idle mark). purge deletes the rooms idle since before --published-before, in
// batches, and never a room with work due; a purged room that gets rows again is listed anew by
// the relay's next claim and its rows are delivered.
TEST_F(OpsCommandsTest, PurgeDeletesRoomsIdleSinceBeforeTheCutOffAndARoomComesBackWithItsRows) {
  const std::string now = kServerNowSql;
  const std::string ten_days_ago = now + " - " + std::to_string(10 * kDayMs);
  auto rooms = [&](const std::string& prefix, int n, const std::string& due,
                   const std::string& updated_at) {
    db_.Exec("INSERT INTO room_outbox_room (room_id, due_at_ms, updated_at_ms) SELECT CONCAT('" +
             prefix + "-', seq), " + due + ", " + updated_at + " FROM seq_1_to_" +
             std::to_string(n));
  };
  const std::string idle = std::to_string(core::sql::kIdleRoomDueMs);
  rooms("idle-old", 12, idle, ten_days_ago);
  rooms("idle-recent", 3, idle, now + " - 3600000");
  rooms("due-old", 2, now + " + 3600000", ten_days_ago);  // due later: never idle, kept
  auto room_rows = [&] { return db_.Scalar("SELECT COUNT(*) FROM room_outbox_room"); };

  CommandResult dry = Ops({"purge", "--published-before", "7d", "--dry-run"});
  ASSERT_EQ(dry.exit_code, 0) << dry.Describe();
  EXPECT_EQ(dry.Json()["idle_rooms_matching"], 12) << dry.Json().dump();
  EXPECT_EQ(dry.Json()["idle_rooms_deleted"], 0);
  EXPECT_EQ(room_rows(), 17);

  CommandResult purge = Ops({"purge", "--published-before", "7d", "--batch-size", "5"});
  ASSERT_EQ(purge.exit_code, 0) << purge.Describe();
  EXPECT_EQ(purge.Json()["idle_rooms_deleted"], 12) << purge.Json().dump();
  EXPECT_EQ(purge.Json()["idle_rooms_batches"], 3) << "12 rooms in batches of 5";
  EXPECT_EQ(db_.Scalar("SELECT COUNT(*) FROM room_outbox_room WHERE room_id LIKE 'idle-old-%'"), 0);
  EXPECT_EQ(room_rows(), 5) << "recently idle and due rooms are kept";

  InsertPending("idle-old-1", 2);
  StartDaemon();
  ASSERT_TRUE(Eventually([&] { return Count("status = 'published'") == 2; }, seconds(30)))
      << relay_->StderrTail();
  EXPECT_EQ(db_.Scalar("SELECT COUNT(*) FROM room_outbox_room WHERE room_id = 'idle-old-1'"), 1)
      << "listed anew";
}

TEST_F(OpsCommandsTest, PurgeDeletesExactlyThePublishedRowsPastTheCutOffInBatches) {
  const std::string now = kServerNowSql;
  auto insert = [&](const std::string& prefix, int n, const std::string& status,
                    const std::string& published_at, const std::string& created_at) {
    db_.Exec(
        "INSERT INTO room_outbox (event_id, event_type, room_id, command_id, envelope, "
        "status, created_at_ms, updated_at_ms, published_at_ms) "
        "SELECT CONCAT('" +
        prefix + "-', seq), 'RoomGiftSent', 'r', CONCAT('cmd-" + prefix + "-', seq), '{}', '" +
        status + "', " + created_at + ", " + created_at + ", " + published_at + " FROM seq_1_to_" +
        std::to_string(n));
  };
  const std::string ten_days_ago = now + " - " + std::to_string(10 * kDayMs);
  insert("old", 50, "published", ten_days_ago, ten_days_ago);
  insert("recent", 20, "published", now + " - 3600000", ten_days_ago);
  insert("oldpending", 5, "pending", "NULL", ten_days_ago);
  insert("oldparked", 4, "parked", "NULL", ten_days_ago);
  auto log = [&](const std::string& prefix, int n, const std::string& created_at) {
    db_.Exec(
        "INSERT INTO room_command_log (command_id, room_id, command_type, payload, "
        "created_at_ms) SELECT CONCAT('cmd-" +
        prefix + "-', seq), 'r', 'T', '{}', " + created_at + " FROM seq_1_to_" + std::to_string(n));
  };
  const std::string forty_days_ago = now + " - " + std::to_string(40 * kDayMs);
  log("old", 30, forty_days_ago);        // their outbox rows are published: purgeable
  log("oldpending", 5, forty_days_ago);  // their commands still have pending rows: kept
  log("recent", 10, now + " - 3600000");
  StartDaemon();  // the relay delivers the pending rows meanwhile ('{}' is undecodable: it fails)

  CommandResult dry = Ops({"purge", "--published-before", "7d", "--command-log-before", "30d",
                           "--batch-size", "7", "--dry-run"});
  ASSERT_EQ(dry.exit_code, 0) << dry.Describe();
  nlohmann::json d = dry.Json();
  EXPECT_EQ(d["dry_run"], true);
  EXPECT_EQ(d["outbox_deleted"], 0);
  EXPECT_EQ(d["command_log_deleted"], 0);
  EXPECT_EQ(d["outbox_matching"], 50) << d.dump();
  EXPECT_EQ(d["command_log_matching"], 30) << d.dump();
  EXPECT_EQ(db_.Scalar("SELECT COUNT(*) FROM room_outbox"), 79);
  EXPECT_EQ(db_.Scalar("SELECT COUNT(*) FROM room_command_log"), 45);

  CommandResult purge = Ops(
      {"purge", "--published-before", "7d", "--command-log-before", "30d", "--batch-size", "7"});
  ASSERT_EQ(purge.exit_code, 0) << purge.Describe();
  nlohmann::json p = purge.Json();
  EXPECT_EQ(p["outbox_deleted"], 50) << p.dump();
  EXPECT_EQ(p["command_log_deleted"], 30) << p.dump();
  EXPECT_EQ(p["outbox_batches"], 8) << "50 rows in batches of 7";
  EXPECT_EQ(p["command_log_batches"], 5) << "30 rows in batches of 7";
  EXPECT_EQ(Count("event_id LIKE 'old-%'"), 0);
  EXPECT_EQ(Count("event_id LIKE 'recent-%'"), 20);
  EXPECT_EQ(Count("event_id LIKE 'oldpending-%'"), 5) << "pending rows are never purged";
  EXPECT_EQ(Count("event_id LIKE 'oldparked-%' AND status = 'parked'"), 4)
      << "parked rows are never purged";
  EXPECT_EQ(db_.Scalar("SELECT COUNT(*) FROM room_command_log WHERE command_id LIKE 'cmd-old-%'"),
            0);
  EXPECT_EQ(db_.Scalar("SELECT COUNT(*) FROM room_command_log"), 15);

  // Without --command-log-before the command log is left alone; a second run finds nothing.
  CommandResult again = Ops({"purge", "--published-before", "30m"});
  ASSERT_EQ(again.exit_code, 0) << again.Describe();
  EXPECT_EQ(again.Json()["outbox_deleted"], 20);
  EXPECT_EQ(again.Json()["command_log_deleted"], 0);
  EXPECT_TRUE(again.Json()["command_log_before_ms"].is_null());
  EXPECT_EQ(db_.Scalar("SELECT COUNT(*) FROM room_command_log"), 15);
  ASSERT_TRUE(relay_->Alive()) << relay_->StderrTail();
}

TEST_F(OpsCommandsTest, MarkParkedStatementParksOnlyForTheClaimHolder) {
  InsertPending("policy", 2);
  db_.Exec("UPDATE room_outbox SET claim_token = 'tok' WHERE room_id = 'policy'");
  const int64_t id1 = db_.Scalar("SELECT id FROM room_outbox WHERE event_id = 'policy-1'");
  const int64_t id2 = db_.Scalar("SELECT id FROM room_outbox WHERE event_id = 'policy-2'");
  auto conn = core::MariaDbConnection::Connect(db_.Options());
  ASSERT_TRUE(conn) << conn.error().message;
  auto stmt = (*conn)->Prepared("mark_parked", core::sql::kMarkParked);
  ASSERT_TRUE(stmt) << stmt.error().message;
  // The first placeholder is the retry_count increment: 1 for a failed attempt, 0 for an
  // expired row ([tencent_im.max_age_by_type]); then last_error, the history's (entries,
  // waited_ms, entry rest or NULL), the id and the token.
  const auto params = [](int64_t attempted, std::string error, core::SqlValue rest, int64_t id,
                         std::string token) {
    const bool entry = !std::holds_alternative<std::monostate>(rest);
    return std::vector<core::SqlValue>{core::SqlValue{attempted},
                                       core::SqlValue{std::move(error)},
                                       core::SqlValue{int64_t{entry ? 1 : 0}},
                                       core::SqlValue{int64_t{250}},
                                       std::move(rest),
                                       core::SqlValue{id},
                                       core::SqlValue{std::move(token)}};
  };
  const std::string entry = "node-a\t1\tpermanent\tim 10010\t12";
  ASSERT_TRUE((*stmt)->Execute(params(1, "im error 10010", core::SqlValue{entry}, id1, "tok")));
  EXPECT_EQ((*stmt)->AffectedRows(), 1u);
  ASSERT_TRUE((*stmt)->Execute(params(1, "x", core::SqlValue{entry}, id2, "other")));
  EXPECT_EQ((*stmt)->AffectedRows(), 0u) << "a relay whose claim was taken over parks nothing";
  ASSERT_TRUE((*stmt)->Execute(params(0, "expired", core::SqlValue{}, id2, "tok")));
  EXPECT_EQ((*stmt)->AffectedRows(), 1u);
  EXPECT_EQ(db_.Scalar("SELECT retry_count FROM room_outbox WHERE event_id = 'policy-2'"), 0)
      << "an expired row was never attempted";
  EXPECT_EQ(db_.Scalar("SELECT attempt_count FROM room_outbox WHERE event_id = 'policy-2'"), 0)
      << "a mark without an entry writes none";
  auto rows = db_.Query(
      "SELECT status, retry_count, last_error, claim_token IS NULL, "
      "parked_at_ms IS NOT NULL, attempt_count, attempts FROM room_outbox WHERE event_id = "
      "'policy-1'");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(*rows[0][0], "parked");
  EXPECT_EQ(*rows[0][1], "1");
  EXPECT_EQ(*rows[0][2], "im error 10010");
  EXPECT_EQ(*rows[0][3], "1");
  EXPECT_EQ(*rows[0][4], "1");
  EXPECT_EQ(*rows[0][5], "1");
  // The server's now less waited_ms, then the rest, one line.
  EXPECT_THAT(*rows[0][6], ::testing::MatchesRegex("[0-9]+\t" + entry + "\n"));
  EXPECT_EQ(StatusOf("policy-2"), "parked");
}

TEST_F(OpsCommandsTest, BadArgumentsExitTwo) {
  const std::vector<std::vector<std::string>> cases = {
      {"show"},
      {"park", "e1"},
      {"park", "--reason", "x"},
      {"requeue"},
      {"requeue", "e1", "--room", "r"},
      {"requeue", "--room", "r", "--all-parked"},
      {"purge"},
      {"purge", "--published-before", "abc"},
      {"purge", "--published-before", "0s"},
      {"purge", "--published-before", "-7d"},
      {"purge", "--published-before", "7d", "--command-log-before", "soon"},
      {"purge", "--published-before", "7d", "--batch-size", "0"},
      {"purge", "--published-before", "7d", "--no-such-flag"},
      {"stats", "extra-argument"},
      {"stats", "--top", "-1"},
      {"stats", "--sort", "newest"},
      {"stats", "--window", "soon"},
      {"stats", "--window", "6m"},
      {"stats", "--window", "-1s"},
  };
  for (const auto& args : cases) {
    CommandResult r = Ops(args);
    std::string joined;
    for (const auto& a : args) joined += a + " ";
    EXPECT_EQ(r.exit_code, 2) << joined << "\n" << r.Describe();
  }
  // An unreadable or invalid config is a usage error too.
  CommandResult missing = RunRelayCommand({"stats", "--config", "/nonexistent/relay.toml"});
  EXPECT_EQ(missing.exit_code, 2) << missing.Describe();
}

TEST_F(OpsCommandsTest, UnknownEventAndUnreachableDatabaseExitOne) {
  CommandResult show = Ops({"show", "no-such-event"});
  EXPECT_EQ(show.exit_code, 1) << show.Describe();
  EXPECT_EQ(show.Json()["code"], "not_found");
  EXPECT_THAT(show.err, HasSubstr("no-such-event"));
  CommandResult requeue = Ops({"requeue", "no-such-event"});
  EXPECT_EQ(requeue.exit_code, 1) << requeue.Describe();

  const std::string dir =
      relay_ ? std::filesystem::path(ConfigPath()).parent_path().string() : std::string("/tmp");
  const std::string config = dir + "/unreachable.toml";
  std::ofstream(config) << "[mysql]\nsocket = \"" << dir
                        << "/no-server.sock\"\nconnect_timeout = \"1s\"\n";
  CommandResult down = RunRelayCommand({"stats", "--config", config});
  EXPECT_EQ(down.exit_code, 1) << down.Describe();
  EXPECT_EQ(down.Json()["code"], "unavailable") << down.Describe();
}

// The purge unit hands the command the database password only: a config that names an IM key
// file which is not there still serves every operator command; the daemon refuses it.
TEST_F(OpsCommandsTest, OperatorCommandsRunWithoutTheImKeyTheyNeverUse) {
  const std::string config = ConfigPath();
  const std::filesystem::path key = std::filesystem::path(config).parent_path() / "tim-secret-key";
  ASSERT_TRUE(std::filesystem::remove(key)) << key;
  for (std::vector<std::string> args :
       {std::vector<std::string>{"stats", "--window", "0s"},
        {"purge", "--published-before", "7d", "--command-log-before", "30d"}}) {
    CommandResult r = Ops(args);
    EXPECT_EQ(r.exit_code, 0) << args[0] << "\n" << r.Describe();
  }
  CommandResult daemon = RunRelayCommand({"--config", config, "--check-config"});
  EXPECT_EQ(daemon.exit_code, 2) << daemon.Describe();
  EXPECT_THAT(daemon.err, HasSubstr("tencent_im.secret_key_file"));
}

}  // namespace
}  // namespace room_outbox::testing
