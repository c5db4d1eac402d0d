// The IM stand-in (FakeImServer, what the tests, the benchmarks and im-stub answer with) and
// packed messages: TencentImPublisher sends a RoomEventBatch message over loopback HTTP and the
// stand-in delivers each of its events in order, counts it as one message against the group cap,
// and answers a malformed pack with an IM error without counting any of it.
#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/clock.h"
#include "core/envelope_codec.h"
#include "core/tencent/im_request.h"
#include "core/tencent/tencent_im_publisher.h"
#include "core/tencent/usersig.h"
#include "fake_clock.h"
#include "support/delivery_checks.h"
#include "support/fake_im_server.h"

namespace room_outbox {
namespace {

using std::chrono::milliseconds;
using testing::FakeImServer;
using testing::FakeImServerOptions;

constexpr milliseconds kTimeout{5000};

Envelope Event(int64_t n, const std::string& room = "r1") {
  Envelope e;
  e.event_id = "evt-" + std::to_string(n);
  e.event_type = "RoomGiftSent";
  e.room_id = room;
  e.room_seq = n;
  e.command_id = "cmd-" + std::to_string(n);
  e.request_id = "req-" + std::to_string(n);
  e.node_id = "node-a";
  e.occurred_at_ms = 1700000000000;
  e.payload = R"({"gift":"rose"})";
  return e;
}

// A pack of the events first..last of room r1 (held in `events`, which must outlive it).
core::PublishMessage Pack(std::vector<Envelope>& events, int64_t first, int64_t last) {
  events.clear();
  for (int64_t n = first; n <= last; ++n) events.push_back(Event(n));
  core::PublishMessage m;
  m.row_id = first;
  m.envelope = events.front();
  for (size_t i = 1; i < events.size(); ++i) m.rest.push_back({&events[i], {}});
  return m;
}

class FakeImPackedTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(server_.running()) << server_.start_error(); }

  std::unique_ptr<core::Publisher> Make(MsgPriority priority = MsgPriority::kHigh) {
    TencentImOptions options = server_.ClientOptions();
    options.msg_priority = priority;
    auto publisher = core::MakeTencentImPublisher(options, clock_);
    EXPECT_TRUE(publisher) << publisher.error().message;
    return publisher ? std::move(*publisher) : nullptr;
  }

  // POSTs `body` to the stand-in's send_group_msg with a valid query; the parsed answer.
  nlohmann::json PostRaw(const std::string& body) {
    const FakeImServerOptions& o = server_.options();
    auto usersig = core::GenUserSig(o.sdk_app_id, o.identifier, o.secret_key,
                                    core::SystemClock().NowMs() / 1000, 86400);
    EXPECT_TRUE(usersig) << usersig.error().message;
    core::SendGroupMsgTarget target(o.sdk_app_id, o.identifier);
    httplib::Client client("127.0.0.1", server_.port());
    auto res = client.Post(target.For(usersig ? *usersig : "", 1), body, "application/json");
    EXPECT_TRUE(res) << httplib::to_string(res.error());
    if (!res) return nullptr;
    return nlohmann::json::parse(res->body, nullptr, false);
  }

  testing::FakeClock clock_{core::SystemClock().NowMs()};
  FakeImServer server_{FakeImServerOptions{}};
};

TEST_F(FakeImPackedTest, APackOfThreeIsDeliveredAsThreeEventsInOrder) {
  auto publisher = Make();
  ASSERT_TRUE(publisher);
  std::vector<Envelope> events;
  core::PublishOutcome out = publisher->Publish(Pack(events, 1, 3), kTimeout);
  ASSERT_EQ(out.status, core::PublishStatus::kPublished) << out.error;

  const auto requests = server_.Requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_NE(requests[0].body.find(R"("Desc":"RoomEventBatch")"), std::string::npos)
      << "the publisher sent no pack: " << requests[0].body;
  const auto stats = server_.Stats();
  EXPECT_EQ(stats.delivered, 3u);
  EXPECT_EQ(stats.delivered_messages, 1u);
  EXPECT_EQ(stats.unique_event_ids, 3u);
  EXPECT_EQ(stats.rejected, 0u);
  const auto by_room = testing::DeliveredByRoom(server_);
  ASSERT_EQ(by_room.count("r1"), 1u);
  std::vector<std::string> ids;
  for (const auto& r : by_room.at("r1")) ids.push_back(r.event_id);
  EXPECT_EQ(ids, (std::vector<std::string>{"evt-1", "evt-2", "evt-3"}));
  EXPECT_EQ(server_.RequestsFor("evt-3").size(), 1u) << "a pack's later events are found too";
}

TEST_F(FakeImPackedTest, AMalformedPackIsAnImErrorAndNoneOfItIsCounted) {
  core::JsonWriter body;
  const std::string first = *core::EncodeEnvelope(Event(1));
  const core::SendGroupMsgParts parts{first, "r1", "RoomEventBatch", "evt-1", "", 42,
                                      MsgPriority::kHigh, {}};
  ASSERT_TRUE(core::WriteSendGroupMsgBody(body, parts).ok());
  // The single form's Data (one bare envelope) under Desc "RoomEventBatch": not {"events":[..]}.
  nlohmann::json answer = PostRaw(std::string(body.text()));
  ASSERT_TRUE(answer.is_object());
  EXPECT_EQ(answer.value("ActionStatus", ""), "FAIL");
  EXPECT_EQ(answer.value("ErrorCode", 0), 10004);
  EXPECT_NE(answer.value("ErrorInfo", "").find("RoomEventBatch Data"), std::string::npos)
      << answer.dump();
  const auto stats = server_.Stats();
  EXPECT_EQ(stats.rejected, 1u);
  EXPECT_EQ(stats.delivered, 0u);
  EXPECT_EQ(stats.unique_event_ids, 0u);
  EXPECT_TRUE(server_.Requests().empty());
}

TEST_F(FakeImPackedTest, APackIsOneMessageAgainstTheGroupCap) {
  FakeImServerOptions options;
  options.group_cap_per_second = 40;
  FakeImServer capped(options);
  ASSERT_TRUE(capped.running()) << capped.start_error();
  // 37 audience messages a second leave room for 3 Normal messages. A pack of 3 takes one of
  // them, so a single message after it is delivered too; were the pack 3 messages, it would not.
  capped.SetGroupChatRate("r1", 37);
  TencentImOptions client = capped.ClientOptions();
  client.msg_priority = MsgPriority::kNormal;
  auto made = core::MakeTencentImPublisher(client, clock_);
  ASSERT_TRUE(made) << made.error().message;
  auto& publisher = *made;
  std::vector<Envelope> events;
  ASSERT_EQ(publisher->Publish(Pack(events, 1, 3), kTimeout).status,
            core::PublishStatus::kPublished);
  core::PublishMessage single;
  single.row_id = 4;
  single.envelope = Event(4);
  ASSERT_EQ(publisher->Publish(single, kTimeout).status, core::PublishStatus::kPublished);
  EXPECT_EQ(capped.Stats().delivered, 4u);
  EXPECT_EQ(capped.Stats().freq_dropped, 0u);

  // A full group (the audience alone is at the cap): a pack is dropped whole.
  capped.SetGroupChatRate("r1", 40);
  core::PublishOutcome dropped = publisher->Publish(Pack(events, 5, 7), kTimeout);
  EXPECT_NE(dropped.status, core::PublishStatus::kPublished);
  EXPECT_TRUE(dropped.definite_drop) << dropped.error;
  const auto stats = capped.Stats();
  EXPECT_EQ(stats.freq_dropped, 1u);
  EXPECT_EQ(stats.delivered, 4u) << "none of the dropped pack's events is delivered";
  EXPECT_EQ(stats.delivered_messages, 2u);
}

}  // namespace
}  // namespace room_outbox
