// The hook's packed sync publish ([tencent_im] pack_max_events) against the test MariaDB and the
// loopback IM stand-in: a command's pending events go out as RoomEventBatch messages of at most
// pack_max_events events, one outcome decides every row of a pack, and a pack that failed
// without a definite drop leaves its size on its first row (room_outbox.pack_size).
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/tencent/im_request.h"
#include "room_outbox/hook.h"
#include "support/fake_im_server.h"
#include "support/test_database.h"
#include "support/wait.h"

namespace room_outbox::testing {
namespace {

using std::chrono::milliseconds;

class HookPackTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(db_.valid());
    ASSERT_TRUE(im_.running()) << im_.start_error();
  }

  std::unique_ptr<Hook> NewHook(size_t pack_max_events,
                                SyncPublishMode mode = SyncPublishMode::kInline) {
    HookOptions options;
    options.mysql = db_.Options();
    options.tencent_im = im_.ClientOptions();
    options.tencent_im.pack_max_events = pack_max_events;
    options.sync_publish = mode;
    options.sync_publish_timeout = milliseconds(3000);
    options.node_id = "node-test";
    Error error;
    auto hook = CreateHook(options, &error);
    EXPECT_TRUE(hook) << error.message;
    return hook;
  }

  static std::vector<Event> Events(const std::string& tag, int count) {
    std::vector<Event> events;
    for (int i = 0; i < count; ++i) {
      events.push_back(Event{"evt-" + tag + "-" + std::to_string(i), "RoomGiftSent", 1, 0,
                             "{\"n\":" + std::to_string(i) + "}"});
    }
    return events;
  }

  // The command's rows in id order: id, envelope, status, pack_size.
  std::vector<TestDatabase::Row> Rows(const std::string& command_id) {
    return db_.Query(
        "SELECT id, envelope, status, pack_size FROM room_outbox WHERE command_id = '" +
        command_id + "' ORDER BY id");
  }

  // `request`'s body is the RoomEventBatch form of `rows` (their stored envelope text, in order).
  static void ExpectBatchOf(const FakeImRequest& request,
                            const std::vector<TestDatabase::Row>& rows) {
    ASSERT_FALSE(rows.empty());
    const auto body = nlohmann::json::parse(request.body);
    const auto& content = body["MsgBody"][0]["MsgContent"];
    EXPECT_EQ(content["Desc"], std::string(core::kRoomEventBatchDesc));
    std::string data = "{\"events\":[";
    for (size_t i = 0; i < rows.size(); ++i) {
      if (i > 0) data += ",";
      data += *rows[i][1];
    }
    data += "]}";
    EXPECT_EQ(content["Data"].get<std::string>(), data);
    EXPECT_EQ(request.random, core::RandomForPack(std::stoll(*rows[0][0]), 0, rows.size()));
  }

  TestDatabase db_;
  FakeImServer im_;
};

TEST_F(HookPackTest, FiveEventsWithPackMaxEventsThreeReachImAsTwoMessages) {
  auto hook = NewHook(3);
  ASSERT_TRUE(hook);
  CommitResult result = hook->Commit(Command{"cmd-pack", "room-pack", "SendGift", "req-1", 1, "{}"},
                                     Events("pack", 5));
  ASSERT_EQ(result.status, CommitStatus::kCommitted) << result.error.message;
  for (const EventDelivery& delivery : result.events) {
    EXPECT_EQ(delivery.state, DeliveryState::kPublished) << delivery.error;
  }
  const auto rows = Rows("cmd-pack");
  ASSERT_EQ(rows.size(), 5u);
  for (const auto& row : rows) {
    EXPECT_EQ(*row[2], "published");
    EXPECT_EQ(*row[3], "0");
  }
  const auto requests = im_.Requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(EventIds(requests[0].events),
            (std::vector<std::string>{"evt-pack-0", "evt-pack-1", "evt-pack-2"}));
  EXPECT_EQ(EventIds(requests[1].events), (std::vector<std::string>{"evt-pack-3", "evt-pack-4"}));
  ExpectBatchOf(requests[0], {rows.begin(), rows.begin() + 3});
  ExpectBatchOf(requests[1], {rows.begin() + 3, rows.end()});
}

TEST_F(HookPackTest, TheBackgroundPublisherPacksTheSameWay) {
  auto hook = NewHook(3, SyncPublishMode::kBackground);
  ASSERT_TRUE(hook);
  CommitResult result =
      hook->Commit(Command{"cmd-bg", "room-bg", "SendGift", "req-1", 1, "{}"}, Events("bg", 5));
  ASSERT_EQ(result.status, CommitStatus::kCommitted) << result.error.message;
  ASSERT_TRUE(Eventually(
      [&] {
        return db_.Scalar(
                   "SELECT COUNT(*) FROM room_outbox WHERE command_id = 'cmd-bg' AND "
                   "status = 'published'") == 5;
      },
      milliseconds(20000)));
  const auto rows = Rows("cmd-bg");
  const auto requests = im_.Requests();
  ASSERT_EQ(requests.size(), 2u);
  ExpectBatchOf(requests[0], {rows.begin(), rows.begin() + 3});
  ExpectBatchOf(requests[1], {rows.begin() + 3, rows.end()});
}

TEST_F(HookPackTest, AFailedPackLeavesItsRowsPendingWithItsSizeOnTheFirstRow) {
  im_.SetDefaultFault(FakeImFault::HttpStatus(503));
  auto hook = NewHook(3);
  ASSERT_TRUE(hook);
  CommitResult result = hook->Commit(Command{"cmd-fail", "room-fail", "SendGift", "req-1", 1, "{}"},
                                     Events("fail", 5));
  ASSERT_EQ(result.status, CommitStatus::kCommitted) << result.error.message;
  for (const EventDelivery& delivery : result.events) {
    EXPECT_EQ(delivery.state, DeliveryState::kPending);
  }
  const auto rows = Rows("cmd-fail");
  ASSERT_EQ(rows.size(), 5u);
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(*rows[i][2], "pending");
    EXPECT_EQ(*rows[i][3], i == 0 ? "3" : "0") << "row " << i;
  }
  // One request: the first pack failed, the rows after it were not tried.
  EXPECT_EQ(im_.Requests().size(), 1u);
  // Released: due now, no claim token left.
  EXPECT_EQ(db_.Scalar("SELECT COUNT(*) FROM room_outbox WHERE command_id = 'cmd-fail' AND "
                       "claim_token IS NULL"),
            5);
  im_.ClearFaults();
}

TEST_F(HookPackTest, ADefinitelyDroppedPackRecordsNoPackSize) {
  im_.SetDefaultFault(FakeImFault::FreqCtrl());
  auto hook = NewHook(3);
  ASSERT_TRUE(hook);
  CommitResult result = hook->Commit(Command{"cmd-drop", "room-drop", "SendGift", "req-1", 1, "{}"},
                                     Events("drop", 3));
  ASSERT_EQ(result.status, CommitStatus::kCommitted) << result.error.message;
  EXPECT_EQ(im_.Requests().size(), 1u);
  EXPECT_EQ(db_.Scalar("SELECT COUNT(*) FROM room_outbox WHERE command_id = 'cmd-drop' AND "
                       "status = 'pending' AND pack_size = 0"),
            3);
  im_.ClearFaults();
}

TEST_F(HookPackTest, PackMaxEventsOneSendsOneMessagePerEvent) {
  auto hook = NewHook(1);
  ASSERT_TRUE(hook);
  CommitResult result =
      hook->Commit(Command{"cmd-one", "room-one", "SendGift", "req-1", 1, "{}"}, Events("one", 5));
  ASSERT_EQ(result.status, CommitStatus::kCommitted) << result.error.message;
  const auto requests = im_.Requests();
  ASSERT_EQ(requests.size(), 5u);
  for (size_t i = 0; i < requests.size(); ++i) {
    EXPECT_EQ(requests[i].events.size(), 1u);
    EXPECT_EQ(requests[i].event_id, "evt-one-" + std::to_string(i));
  }
  EXPECT_EQ(db_.Scalar("SELECT COUNT(*) FROM room_outbox WHERE command_id = 'cmd-one' AND "
                       "status = 'published'"),
            5);
}

TEST_F(HookPackTest, CreateRefusesPackMaxEventsAboveTheLimit) {
  HookOptions options;
  options.mysql = db_.Options();
  options.tencent_im = im_.ClientOptions();
  options.tencent_im.pack_max_events = kMaxPackEvents + 1;
  Error error;
  EXPECT_FALSE(CreateHook(options, &error));
  EXPECT_EQ(error.code, ErrorCode::kInvalidArgument);
  EXPECT_NE(error.message.find("tencent_im.pack_max_events"), std::string::npos) << error.message;
}

}  // namespace
}  // namespace room_outbox::testing
