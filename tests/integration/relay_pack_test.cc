// [tencent_im] pack_max_events as processes: a real relay against the private MariaDB and the
// fake IM server sends a room's backlog as RoomEventBatch messages in room order, and a pack whose
// outcome was unknown is recorded (pack_size) and sent again byte for byte, whatever
// pack_max_events (larger or smaller) and room_min_interval the next relay runs with.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/tencent/im_request.h"
#include "support/fake_im_server.h"
#include "support/relay_process.h"
#include "support/test_database.h"
#include "support/test_rows.h"
#include "support/wait.h"

namespace room_outbox::testing {
namespace {

using std::chrono::seconds;
using ::testing::ElementsAre;

class RelayPackTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(db_.valid());
    ASSERT_TRUE(im_.running()) << im_.start_error();
  }

  // Pending rows `room`-1 .. `room`-n, due at once, in id order.
  void InsertRoom(const std::string& room, int n) {
    for (int seq = 1; seq <= n; ++seq) {
      const std::string id = room + "-" + std::to_string(seq);
      db_.Exec(
          "INSERT INTO room_outbox (event_id, event_type, room_id, command_id, request_id, "
          "envelope, status, retry_count, next_attempt_at_ms, created_at_ms, updated_at_ms) "
          "VALUES (" +
          SqlQuote(id) + ", 'RoomGiftSent', " + SqlQuote(room) + ", " + SqlQuote("cmd-" + id) +
          ", " + SqlQuote("req-" + id) + ", " + SqlQuote(TestEnvelope(id, room, seq, "pack-test")) +
          ", 'pending', 0, 0, " + std::string(kServerNowSql) + ", " + std::string(kServerNowSql) +
          ")");
    }
  }
  int64_t Id(const std::string& event_id) {
    return db_.Scalar("SELECT id FROM room_outbox WHERE event_id = " + SqlQuote(event_id));
  }
  int64_t Count(const std::string& where) {
    return db_.Scalar("SELECT COUNT(*) FROM room_outbox WHERE " + where);
  }
  std::unique_ptr<RelayProcess> Relay(const std::string& pack_max_events,
                                      std::vector<std::string> args = {},
                                      const std::string& room_min_interval = "50ms") {
    RelayProcessOptions options;
    options.node_id = "pack-test-relay";
    options.outbox_worker = {{"poll_interval", "\"200ms\""},
                             {"room_min_interval", "\"" + room_min_interval + "\""}};
    options.tencent_im = {{"pack_max_events", pack_max_events}};
    options.args = std::move(args);
    return std::make_unique<RelayProcess>(db_, im_, std::move(options));
  }

  // Rows hot-1 .. hot-5, drained once with packs of 3 while the first request's connection
  // drops after it went out: the pack hot-1 .. hot-3 has an unknown outcome and is recorded.
  void RecordAPackOfThree() {
    InsertRoom("hot", 5);
    auto seen = std::make_shared<std::atomic<int>>(0);
    im_.SetFaultFunction([seen](const FakeImRequest&) -> std::optional<FakeImFault> {
      if (seen->fetch_add(1) == 0) return FakeImFault::DropConnection();
      return std::nullopt;
    });
    auto once = Relay("3", {"--once"});
    ASSERT_TRUE(once->Start());
    auto drained = once->Wait(seconds(60));
    ASSERT_TRUE(drained) << once->StderrTail();
    EXPECT_EQ(Count("status = 'published'"), 0) << once->StderrTail();
    ASSERT_EQ(db_.Scalar("SELECT pack_size FROM room_outbox WHERE event_id = 'hot-1'"), 3)
        << once->StderrTail();
  }

  // `relay` (not started) drains the room: the recorded pack goes again byte for byte, then
  // hot-4 and hot-5 in one message.
  void ExpectTheSamePackThenTheRest(RelayProcess& relay) {
    ASSERT_TRUE(relay.Start());
    ASSERT_TRUE(Eventually([&] { return Count("status = 'published'") == 5; }, seconds(30)))
        << relay.StderrTail();
    const std::vector<FakeImRequest> requests = im_.Requests();
    ASSERT_EQ(requests.size(), 3u);
    EXPECT_THAT(EventIds(requests[0].events), ElementsAre("hot-1", "hot-2", "hot-3"));
    EXPECT_EQ(requests[1].body, requests[0].body) << "byte-identical: IM can dedupe it";
    EXPECT_THAT(EventIds(requests[2].events), ElementsAre("hot-4", "hot-5"));
  }

  TestDatabase db_;
  FakeImServer im_;
};

TEST_F(RelayPackTest, ARoomsBacklogGoesOutAsPacksInRoomOrder) {
  InsertRoom("hot", 7);
  InsertRoom("quiet", 1);
  auto relay = Relay("3");
  ASSERT_TRUE(relay->Start());
  ASSERT_TRUE(Eventually([&] { return Count("status = 'published'") == 8; }, seconds(30)))
      << relay->StderrTail();
  std::vector<FakeImRequest> hot;
  for (const FakeImRequest& request : im_.Requests()) {
    if (request.room_id == "hot") hot.push_back(request);
  }
  ASSERT_EQ(hot.size(), 3u);
  EXPECT_THAT(EventIds(hot[0].events), ElementsAre("hot-1", "hot-2", "hot-3"));
  EXPECT_THAT(EventIds(hot[1].events), ElementsAre("hot-4", "hot-5", "hot-6"));
  EXPECT_THAT(EventIds(hot[2].events), ElementsAre("hot-7"));
  EXPECT_EQ(hot[0].random, core::RandomForPack(Id("hot-1"), 0, 3));
  EXPECT_EQ(hot[1].random, core::RandomForPack(Id("hot-4"), 0, 3));
  EXPECT_EQ(hot[2].random, core::RandomForRow(Id("hot-7"), 0));
  const auto body = nlohmann::json::parse(hot[2].body);
  EXPECT_EQ(body["MsgBody"][0]["MsgContent"]["Desc"], "RoomGiftSent") << "one event: single form";
  EXPECT_EQ(im_.RequestsFor("quiet-1").size(), 1u);
  EXPECT_EQ(Count("pack_size <> 0"), 0);
  auto exit = relay->Stop(seconds(20));
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->exit_code, 0) << Describe(*exit);
}

TEST_F(RelayPackTest, APackWithAnUnknownOutcomeIsSentAgainByteForByteUnderAnotherPackLimit) {
  ASSERT_NO_FATAL_FAILURE(RecordAPackOfThree());
  EXPECT_EQ(Count("pack_size <> 0"), 1);
  EXPECT_EQ(Count("retry_count = 1"), 3) << "the pack's three rows were attempted";

  // The next relay packs up to 5, but the recorded pack goes first, as it was.
  auto relay = Relay("5");
  ASSERT_NO_FATAL_FAILURE(ExpectTheSamePackThenTheRest(*relay));
  EXPECT_NE(im_.Requests()[2].random, im_.Requests()[0].random);
  auto exit = relay->Stop(seconds(20));
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->exit_code, 0) << Describe(*exit);
}

// The next relay packs at most 2 and paces a room to one message per round (room_min_interval =
// poll_interval): its claim still takes the recorded pack of 3 as that one message, and the
// resend is the same pack.
TEST_F(RelayPackTest, APackWithAnUnknownOutcomeIsSentAgainByteForByteUnderASmallerPackLimit) {
  ASSERT_NO_FATAL_FAILURE(RecordAPackOfThree());
  auto relay = Relay("2", {}, "200ms");
  ASSERT_NO_FATAL_FAILURE(ExpectTheSamePackThenTheRest(*relay));
  EXPECT_EQ(im_.Requests()[2].random, core::RandomForPack(Id("hot-4"), 0, 2));
  EXPECT_THAT(relay->Stderr(), ::testing::Not(::testing::HasSubstr("recorded pack")));
  auto exit = relay->Stop(seconds(20));
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->exit_code, 0) << Describe(*exit);
}

}  // namespace
}  // namespace room_outbox::testing
