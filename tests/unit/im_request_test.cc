#include "tencent/im_request.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace room_outbox {
namespace {

Envelope Sample() {
  Envelope e;
  e.event_id = "evt-1";
  e.event_type = "RoomGiftSent";
  e.room_id = "r42";
  e.room_seq = 7;
  e.command_id = "cmd-1";
  e.request_id = "req-1";
  e.node_id = "node-a";
  e.occurred_at_ms = 1700000000123;
  e.payload = R"({"gift":"rose"})";
  return e;
}

TEST(ImRequestTest, RandomIsFirstFourBytesOfSha256) {
  // python3: int.from_bytes(hashlib.sha256(b"evt-1").digest()[:4], "big")
  EXPECT_EQ(RandomForEvent("evt-1"), 2067832723u);
  EXPECT_EQ(RandomForEvent(""), 3820012610u);
}

TEST(ImRequestTest, RandomIsStableAndSpreadsOverEventIds) {
  EXPECT_EQ(RandomForEvent("evt-abc"), RandomForEvent("evt-abc"));
  EXPECT_NE(RandomForEvent("evt-1"), RandomForEvent("evt-2"));
  // A uint32 whose top bit is set for some ids: the full 32-bit range is used.
  bool high_bit = false;
  for (int i = 0; i < 64 && !high_bit; ++i) {
    high_bit = (RandomForEvent("evt-" + std::to_string(i)) & 0x80000000u) != 0;
  }
  EXPECT_TRUE(high_bit);
}

TEST(ImRequestTest, BodyHasExactBytesForSample) {
  auto body = BuildSendGroupMsgBody(Sample(), "live_");
  ASSERT_TRUE(body) << body.error().message;
  const char* expected =
      R"({"GroupId":"live_r42","Random":2067832723,"MsgBody":[{"MsgType":"TIMCustomElem",)"
      R"("MsgContent":{"Data":"{\"event_id\":\"evt-1\",\"event_type\":\"RoomGiftSent\",)"
      R"(\"room_id\":\"r42\",\"room_seq\":7,\"command_id\":\"cmd-1\",\"request_id\":\"req-1\",)"
      R"(\"node_id\":\"node-a\",\"occurred_at_ms\":1700000000123,\"payload\":{\"gift\":\"rose\"}}",)"
      R"("Desc":"RoomGiftSent","Ext":"evt-1"}}]})";
  EXPECT_EQ(*body, expected);
}

TEST(ImRequestTest, BodyIsByteIdenticalOnEveryBuild) {
  auto first = BuildSendGroupMsgBody(Sample(), "");
  auto second = BuildSendGroupMsgBody(Sample(), "");
  ASSERT_TRUE(first);
  ASSERT_TRUE(second);
  EXPECT_EQ(*first, *second);
  auto doc = nlohmann::json::parse(*first);
  EXPECT_EQ(doc["GroupId"], "r42");
}

TEST(ImRequestTest, BodyRejectsBadEnvelopes) {
  struct Case {
    const char* name;
    Envelope envelope;
  };
  Envelope no_room = Sample();
  no_room.room_id.clear();
  Envelope bad_payload = Sample();
  bad_payload.payload = "[1,2]";
  Envelope bad_utf8 = Sample();
  bad_utf8.event_type = "Gift\xff";
  const Case cases[] = {{"empty room", no_room},
                        {"payload not an object", bad_payload},
                        {"invalid utf-8", bad_utf8}};
  for (const auto& c : cases) {
    auto body = BuildSendGroupMsgBody(c.envelope, "live_");
    ASSERT_FALSE(body) << c.name;
    EXPECT_EQ(body.error().code, ErrorCode::kInvalidArgument) << c.name;
  }
}

TEST(ImRequestTest, UrlCarriesQueryInDocumentedOrder) {
  EXPECT_EQ(BuildSendGroupMsgUrl("https://console.tim.qq.com", 1400000000, "administrator",
                                 "eJyr*-_", 4294967295u),
            "https://console.tim.qq.com/v4/group_open_http_svc/send_group_msg"
            "?sdkappid=1400000000&identifier=administrator&usersig=eJyr*-_&random=4294967295"
            "&contenttype=json");
}

TEST(ImRequestTest, UrlPercentEncodesIdentifier) {
  std::string url = BuildSendGroupMsgUrl("http://127.0.0.1:8080", 1, "ad min&x=1/é", "s", 0);
  EXPECT_NE(url.find("identifier=ad%20min%26x%3D1%2F%C3%A9&"), std::string::npos) << url;
  EXPECT_NE(url.find("&random=0&"), std::string::npos) << url;
}

}  // namespace
}  // namespace room_outbox
