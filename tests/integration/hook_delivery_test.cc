// The hook against the real MariaDB and a loopback stand-in for Tencent IM, and the relay's
// worker picking up what the sync publish left: the original specification's acceptance rows end
// to end.
#include <gtest/gtest.h>

#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/tencent/tencent_im_publisher.h"
#include "room_outbox/hook.h"
#include "store/mariadb_relay_store.h"
#include "support/fake_im_server.h"
#include "support/test_database.h"
#include "telemetry/log_line.h"
#include "telemetry/metrics.h"
#include "worker/outbox_worker.h"

namespace room_outbox::testing {
namespace {

using std::chrono::milliseconds;

constexpr const char* kSnapshotTable =
    "CREATE TABLE room_snapshot (room_id VARCHAR(128) NOT NULL PRIMARY KEY, room_seq BIGINT NOT "
    "NULL, state MEDIUMTEXT NOT NULL) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin";

class HookDeliveryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(db_.valid());
    ASSERT_TRUE(im_.running()) << im_.start_error();
    db_.Exec(kSnapshotTable);
  }

  HookOptions Options() const {
    HookOptions options;
    options.mysql = db_.Options();
    options.tencent_im = im_.ClientOptions();
    options.sync_publish_timeout = milliseconds(300);
    options.node_id = "node-test";
    return options;
  }

  std::unique_ptr<Hook> NewHook() {
    Error error;
    auto hook = CreateHook(Options(), &error);
    EXPECT_TRUE(hook) << error.message;
    return hook;
  }

  // A JoinRoom command with its snapshot written through the caller's statements.
  CommitResult Join(Hook& hook, const std::string& room, int64_t seq,
                    const std::string& type = "RoomUserJoined",
                    const std::string& payload = R"({"user_id":"u1"})") {
    Command command{"cmd-" + room + "-" + std::to_string(seq), room, "JoinRoom", "req-1", seq,
                    payload};
    std::vector<Event> events{Event{"evt-" + room + "-" + std::to_string(seq), type, seq, 0,
                                    payload}};
    return hook.Commit(command, events, [&](Transaction& tx) {
      return tx.Execute(
          "INSERT INTO room_snapshot (room_id, room_seq, state) VALUES (?, ?, ?) "
          "ON DUPLICATE KEY UPDATE room_seq = VALUES(room_seq), state = VALUES(state)",
          {room, seq, std::string(R"({"members":1})")});
    });
  }

  std::string Column(const std::string& event_id, const std::string& column) {
    auto rows = db_.Query("SELECT " + column + " FROM room_outbox WHERE event_id='" + event_id +
                          "'");
    if (rows.empty() || rows[0].empty()) {
      ADD_FAILURE() << "no row for " << event_id;
      return "";
    }
    return rows[0][0].value_or("NULL");
  }

  // One relay round over the same database and IM stand-in, as outbox-relay runs it.
  relay::RoundResult RelayRound(milliseconds poll_interval = milliseconds(100)) {
    if (!store_) {
      store_ = relay::MakeMariaDbRelayStore(db_.Options());
      auto publisher = core::MakeTencentImPublisher(im_.ClientOptions());
      EXPECT_TRUE(publisher) << publisher.error().message;
      publisher_ = std::move(*publisher);
      logger_ = relay::MakeStreamLogger(log_, relay::LogFormat::kText, spdlog::level::debug);
    }
    relay::WorkerOptions options;
    options.node_id = "relay-test";
    options.poll_interval = poll_interval;
    options.room_min_interval = milliseconds(0);
    relay::OutboxWorker worker(options, *store_, *publisher_, clock_, stop_, metrics_, *logger_);
    return worker.RunRound();
  }

  TestDatabase db_;
  FakeImServer im_;
  std::unique_ptr<relay::MariaDbRelayStore> store_;
  std::unique_ptr<core::Publisher> publisher_;
  relay::SystemLoopClock clock_;
  relay::LoopSignal stop_;
  relay::Metrics metrics_;
  std::ostringstream log_;
  std::unique_ptr<relay::Logger> logger_;
};

TEST_F(HookDeliveryTest, SyncFailureStillCommitsStateAndLeavesTheRowPendingUncounted) {
  im_.SetDefaultFault(FakeImFault::HttpStatus(502));
  auto hook = NewHook();
  ASSERT_TRUE(hook);

  CommitResult result = Join(*hook, "room-1", 1);

  ASSERT_EQ(result.status, CommitStatus::kCommitted) << result.error.message;
  EXPECT_EQ(result.events[0].state, DeliveryState::kPending);
  EXPECT_EQ(db_.Scalar("SELECT room_seq FROM room_snapshot WHERE room_id='room-1'"), 1);
  EXPECT_EQ(db_.Scalar("SELECT COUNT(*) FROM room_command_log WHERE command_id='cmd-room-1-1'"),
            1);
  EXPECT_EQ(Column("evt-room-1-1", "status"), "pending");
  EXPECT_EQ(Column("evt-room-1-1", "retry_count"), "0");
  EXPECT_EQ(Column("evt-room-1-1", "claim_token"), "NULL");  // handed to the relay at once
  EXPECT_EQ(im_.RequestsFor("evt-room-1-1").size(), 1u);
}

TEST_F(HookDeliveryTest, EveryImFaultLeavesTheRowPendingWithAShortSecretFreeError) {
  struct Case {
    const char* name;
    FakeImFault fault;
  } cases[] = {
      {"internal error 10002", FakeImFault::ImError(10002, "internal server error")},
      {"expired usersig 70001", FakeImFault::ImError(70001, "usersig expired")},
      {"group gone 10010", FakeImFault::ImError(10010, "group not found")},
      {"http 502", FakeImFault::HttpStatus(502)},
      {"slower than sync_publish_timeout", FakeImFault::Ok().After(milliseconds(1500))},
      {"dropped connection", FakeImFault::DropConnection()},
      {"not json", FakeImFault::NotJson()},
      {"frequency control drop", FakeImFault::FreqCtrl()},
  };
  int room = 0;
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    im_.SetDefaultFault(c.fault);
    auto hook = NewHook();  // a fresh connection per case: no resend on a reused one
    ASSERT_TRUE(hook);
    const std::string room_id = "fault-room-" + std::to_string(room++);
    const auto started = std::chrono::steady_clock::now();

    CommitResult result = Join(*hook, room_id, 1);

    const auto took = std::chrono::steady_clock::now() - started;
    ASSERT_EQ(result.status, CommitStatus::kCommitted) << result.error.message;
    const EventDelivery& delivery = result.events[0];
    EXPECT_EQ(delivery.state, DeliveryState::kPending);
    EXPECT_FALSE(delivery.error.empty());
    EXPECT_LE(delivery.error.size(), 200u) << delivery.error;
    EXPECT_EQ(delivery.error.find(im_.options().secret_key), std::string::npos);
    EXPECT_EQ(delivery.error.find("usersig="), std::string::npos) << delivery.error;
    EXPECT_EQ(delivery.error.find("<html"), std::string::npos) << delivery.error;
    const std::string event_id = "evt-" + room_id + "-1";
    EXPECT_EQ(Column(event_id, "status"), "pending");
    EXPECT_EQ(Column(event_id, "retry_count"), "0");
    // The commit returns within sync_publish_timeout (plus the one 70001 re-sign retry and slack).
    EXPECT_LT(took, milliseconds(1400));
  }
  im_.ClearFaults();  // let delayed answers finish fast before the server stops
}

TEST_F(HookDeliveryTest, SyncSuccessMarksPublishedAndTheRelayNeverSendsItAgain) {
  auto hook = NewHook();
  ASSERT_TRUE(hook);

  CommitResult result = Join(*hook, "room-ok", 1);

  ASSERT_EQ(result.status, CommitStatus::kCommitted);
  EXPECT_EQ(result.events[0].state, DeliveryState::kPublished);
  EXPECT_EQ(Column("evt-room-ok-1", "status"), "published");
  EXPECT_EQ(Column("evt-room-ok-1", "last_error"), "NULL");
  EXPECT_NE(Column("evt-room-ok-1", "published_at_ms"), "NULL");
  relay::RoundResult round = RelayRound();
  EXPECT_EQ(round.claim.claimed, 0u);
  EXPECT_EQ(im_.RequestsFor("evt-room-ok-1").size(), 1u);
}

TEST_F(HookDeliveryTest, NonImEventsAreMarkedPublishedWithoutASend) {
  auto hook = NewHook();
  ASSERT_TRUE(hook);
  Command command{"cmd-types", "room-types", "SendGift", "req", 3, "{}"};
  std::vector<Event> events{Event{"evt-created", "RoomCreated", 3, 0, "{}"},
                            Event{"evt-heat", "RoomHeatChanged", 3, 0, R"({"heat":5})"},
                            Event{"evt-rank", "RoomRankChanged", 3, 0, R"({"rank":[]})"}};

  CommitResult result = hook->Commit(command, events);

  ASSERT_EQ(result.status, CommitStatus::kCommitted);
  for (const EventDelivery& delivery : result.events) {
    EXPECT_EQ(delivery.state, DeliveryState::kSkipped) << delivery.event_id;
    EXPECT_EQ(Column(delivery.event_id, "status"), "published") << delivery.event_id;
  }
  EXPECT_EQ(im_.Stats().requests, 0u);
  EXPECT_EQ(RelayRound().claim.claimed, 0u);  // nothing of it is ever pending
}

TEST_F(HookDeliveryTest, TypesNeverSentArePublishedByTheCommitAndNeverPending) {
  im_.SetDefaultFault(FakeImFault::HttpStatus(502));  // the sent type fails its sync publish
  auto hook = NewHook();
  ASSERT_TRUE(hook);
  Command command{"cmd-mixed", "room-mixed", "SendGift", "req", 4, "{}"};
  std::vector<Event> events{Event{"evt-m-heat", "RoomHeatChanged", 4, 0, R"({"heat":1})"},
                            Event{"evt-m-gift", "RoomGiftSent", 4, 0, R"({"gift":"rose"})"},
                            Event{"evt-m-rank", "RoomRankChanged", 4, 0, R"({"rank":[]})"}};

  CommitResult result = hook->Commit(command, events);

  ASSERT_EQ(result.status, CommitStatus::kCommitted) << result.error.message;
  EXPECT_EQ(result.events[0].state, DeliveryState::kSkipped);
  EXPECT_EQ(result.events[1].state, DeliveryState::kPending);
  // Behind a failed event of its own command, a type never sent is not held: it was never
  // pending at all.
  EXPECT_EQ(result.events[2].state, DeliveryState::kSkipped);
  for (const char* id : {"evt-m-heat", "evt-m-rank"}) {
    EXPECT_EQ(Column(id, "status"), "published") << id;
    EXPECT_NE(Column(id, "published_at_ms"), "NULL") << id;
    EXPECT_EQ(Column(id, "claim_token"), "NULL") << id;
    EXPECT_EQ(Column(id, "retry_count"), "0") << id;
    EXPECT_TRUE(im_.RequestsFor(id).empty()) << id;
  }
  EXPECT_EQ(db_.Scalar("SELECT COUNT(*) FROM room_outbox WHERE status = 'pending'"), 1);

  // The relay claims only the row that is really to be sent.
  im_.SetDefaultFault(FakeImFault::Ok());
  relay::RoundResult round = RelayRound();
  EXPECT_EQ(round.claim.claimed, 1u);
  EXPECT_EQ(round.marks.published, 1u);
  EXPECT_EQ(Column("evt-m-gift", "status"), "published");
  EXPECT_EQ(im_.Stats().requests, 2u);  // the failed sync try and the relay's
}

TEST_F(HookDeliveryTest, RepeatedCommandIdWritesAndSendsNothing) {
  auto hook = NewHook();
  ASSERT_TRUE(hook);
  ASSERT_EQ(Join(*hook, "room-dup", 1).status, CommitStatus::kCommitted);

  CommitResult again = Join(*hook, "room-dup", 1);

  EXPECT_EQ(again.status, CommitStatus::kDuplicate);
  EXPECT_EQ(db_.Scalar("SELECT COUNT(*) FROM room_outbox"), 1);
  EXPECT_EQ(im_.Stats().requests, 1u);
}

TEST_F(HookDeliveryTest, SyncFailureThenTheRelayPublishesTheSameEventWithTheSameBody) {
  im_.PushFaultForEvent("evt-room-2-1", FakeImFault::ImError(10002, "busy"));
  auto hook = NewHook();
  ASSERT_TRUE(hook);
  ASSERT_EQ(Join(*hook, "room-2", 1).status, CommitStatus::kCommitted);
  ASSERT_EQ(Column("evt-room-2-1", "status"), "pending");

  relay::RoundResult round = RelayRound();

  EXPECT_EQ(round.marks.published, 1u);
  EXPECT_EQ(Column("evt-room-2-1", "status"), "published");
  EXPECT_EQ(Column("evt-room-2-1", "retry_count"), "0");
  auto requests = im_.RequestsFor("evt-room-2-1");
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[0].body, requests[1].body);  // IM dedupes a resend by Random + content
  EXPECT_EQ(requests[0].random, requests[1].random);
}

TEST_F(HookDeliveryTest, RelayFailureCountsTheAttemptAndTheNextRoundDelivers) {
  im_.SetDefaultFault(FakeImFault::ImError(10002, "busy"));
  auto hook = NewHook();
  ASSERT_TRUE(hook);
  ASSERT_EQ(Join(*hook, "room-3", 1).status, CommitStatus::kCommitted);

  relay::RoundResult failed = RelayRound(milliseconds(200));

  EXPECT_EQ(failed.marks.failed, 1u);
  EXPECT_EQ(Column("evt-room-3-1", "status"), "pending");
  EXPECT_EQ(Column("evt-room-3-1", "retry_count"), "1");
  EXPECT_NE(Column("evt-room-3-1", "last_error").find("10002"), std::string::npos);
  // Fixed interval: not due again before poll_interval has passed.
  EXPECT_EQ(RelayRound(milliseconds(200)).claim.claimed, 0u);

  im_.ClearFaults();
  std::this_thread::sleep_for(milliseconds(250));
  relay::RoundResult delivered = RelayRound(milliseconds(200));

  EXPECT_EQ(delivered.marks.published, 1u);
  EXPECT_EQ(Column("evt-room-3-1", "status"), "published");
  EXPECT_EQ(Column("evt-room-3-1", "retry_count"), "1");
  EXPECT_EQ(Column("evt-room-3-1", "last_error"), "NULL");
}

TEST_F(HookDeliveryTest, AnEarlierPendingEventHoldsTheSyncPublishSoTheRoomStaysInOrder) {
  im_.PushFaultForEvent("evt-room-4-1", FakeImFault::HttpStatus(502));
  auto hook = NewHook();
  ASSERT_TRUE(hook);
  ASSERT_EQ(Join(*hook, "room-4", 1).status, CommitStatus::kCommitted);

  CommitResult second = Join(*hook, "room-4", 2);

  ASSERT_EQ(second.status, CommitStatus::kCommitted);
  EXPECT_EQ(second.events[0].state, DeliveryState::kPending);
  EXPECT_TRUE(im_.RequestsFor("evt-room-4-2").empty());
  // The relay sends both, the older first.
  for (int i = 0; i < 3 && Column("evt-room-4-2", "status") != "published"; ++i) {
    (void)RelayRound();
  }
  std::vector<int64_t> delivered_seqs;
  for (const FakeImRequest& r : im_.Requests()) {
    if (r.room_id == "room-4" && r.answer == FakeImFault::Kind::kOk) {
      delivered_seqs.push_back(r.room_seq);
    }
  }
  EXPECT_EQ(delivered_seqs, (std::vector<int64_t>{1, 2}));
}

// A GroupId must be printable ASCII (commit_checks.h), so non-ASCII text travels in the payload.
TEST_F(HookDeliveryTest, LargePayloadWithNonAsciiTextReachesImIntact) {
  auto hook = NewHook();
  ASSERT_TRUE(hook);
  const std::string room = "live-room-42";
  const std::string big = R"({"title":"直播间-🎁","text":")" + std::string(6000, 'x') + R"("})";

  CommitResult result = Join(*hook, room, 1, "RoomGiftSent", big);

  ASSERT_EQ(result.status, CommitStatus::kCommitted);
  EXPECT_EQ(result.events[0].state, DeliveryState::kPublished) << result.events[0].error;
  auto requests = im_.Requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].room_id, room);
  EXPECT_NE(requests[0].body.find(std::string(6000, 'x')), std::string::npos);
  EXPECT_NE(requests[0].body.find("直播间-🎁"), std::string::npos);
  EXPECT_EQ(Column("evt-" + room + "-1", "room_id"), room);
}

TEST_F(HookDeliveryTest, CommandsThatCouldNeverBeStoredWholeOrDeliveredWriteNothing) {
  auto hook = NewHook();
  ASSERT_TRUE(hook);
  const std::string too_long(129, 'x');
  const std::vector<std::string> bad_rooms = {"room\x01", "@TGS#aXXXXXX", std::string(49, 'r'),
                                              "room-\xe7\xa4\xbc"};
  std::vector<std::pair<Command, std::vector<Event>>> cases;
  for (const std::string& room : bad_rooms) {
    cases.push_back({Command{"cmd-bad-room", room, "SendGift", "req-1", 1, "{}"},
                     {Event{"evt-bad-room", "RoomGiftSent", 1, 0, "{}"}}});
  }
  cases.push_back({Command{too_long, "room-1", "SendGift", "req-1", 1, "{}"},
                   {Event{"evt-long-cmd", "RoomGiftSent", 1, 0, "{}"}}});
  cases.push_back({Command{"cmd-long-event", "room-1", "SendGift", "req-1", 1, "{}"},
                   {Event{too_long, "RoomGiftSent", 1, 0, "{}"}}});
  cases.push_back({Command{"cmd-long-type", "room-1", std::string(65, 't'), "req-1", 1, "{}"},
                   {Event{"evt-long-type", "RoomGiftSent", 1, 0, "{}"}}});
  for (const auto& [command, events] : cases) {
    bool caller_ran = false;
    CommitResult result = hook->Commit(command, events, [&](Transaction&) {
      caller_ran = true;
      return Status();
    });
    EXPECT_EQ(result.status, CommitStatus::kFailed) << command.room_id;
    EXPECT_EQ(result.error.code, ErrorCode::kInvalidArgument) << result.error.message;
    EXPECT_FALSE(caller_ran) << result.error.message;
  }
  EXPECT_EQ(db_.Scalar("SELECT COUNT(*) FROM room_command_log"), 0);
  EXPECT_EQ(db_.Scalar("SELECT COUNT(*) FROM room_outbox"), 0);
  EXPECT_EQ(im_.Stats().requests, 0u);
}

}  // namespace
}  // namespace room_outbox::testing
