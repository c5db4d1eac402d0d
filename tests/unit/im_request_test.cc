#include "core/tencent/im_request.h"

#include <gtest/gtest.h>
#include <openssl/sha.h>

#include <algorithm>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "core/envelope_codec.h"

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

uint32_t Sha256Prefix(std::string_view text) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(text.data()), text.size(), digest);
  return (static_cast<uint32_t>(digest[0]) << 24) | (static_cast<uint32_t>(digest[1]) << 16) |
         (static_cast<uint32_t>(digest[2]) << 8) | static_cast<uint32_t>(digest[3]);
}

// The least distance of k * kRandomStride (mod 2^32) from 0 over 1 <= k <= max_k: two rows whose
// drop generations differ by at most max_k can share a Random only this many ids apart.
uint32_t MinDistance(uint32_t max_k) {
  uint32_t best = UINT32_MAX;
  for (uint32_t k = 1; k <= max_k; ++k) {
    uint32_t v = k * core::kRandomStride;  // wraps mod 2^32
    best = std::min({best, v, static_cast<uint32_t>(0u - v)});
  }
  return best;
}

TEST(ImRequestTest, RandomIsRowIdPlusGenerationTimesStride) {
  EXPECT_EQ(core::RandomForRow(0, 0), 0u);
  EXPECT_EQ(core::RandomForRow(1, 0), 1u);
  EXPECT_EQ(core::RandomForRow(4294967295, 0), 4294967295u);
  EXPECT_EQ(core::RandomForRow(4294967296, 0), 0u) << "mod 2^32";
  EXPECT_EQ(core::RandomForRow(7, 1), 7u + 0x9E3779B9u);
  EXPECT_EQ(core::RandomForRow(7, 2), static_cast<uint32_t>(7u + 2u * 0x9E3779B9u));
  EXPECT_EQ(core::RandomForRow(12345, 3), core::RandomForRow(12345, 3))
      << "the same inputs, the same Random";
  EXPECT_EQ(core::kRandomStride % 2, 1u) << "odd, hence invertible mod 2^32";
}

TEST(ImRequestTest, TheBoundsInTheCommentHold) {
  EXPECT_EQ(MinDistance(15), 147'926'629u);
  EXPECT_EQ(MinDistance(63), 34'920'769u);
  EXPECT_EQ(MinDistance(255), 8'243'553u);
  EXPECT_EQ(MinDistance(1023), 1'946'557u);
}

// The old formula took the first 32 bits of SHA-256(event_id): in room-sim's id format
// ("<run id>-c<command>-e<event>") two events of one run, 12,181 commands apart, collide. The
// row-id formula tells every pair of rows apart.
TEST(ImRequestTest, RowIdsOfAKnownSha256PrefixCollisionGetDistinctRandoms) {
  const std::string a = "sim19ad6f3e000-c11072-e0";
  const std::string b = "sim19ad6f3e000-c23253-e0";
  ASSERT_EQ(Sha256Prefix(a), Sha256Prefix(b)) << "the pair collides under the old formula";
  ASSERT_EQ(Sha256Prefix(a), 1505127279u);
  // Rows of those events, committed one after the other or far apart.
  EXPECT_NE(core::RandomForRow(11072, 0), core::RandomForRow(23253, 0));
  EXPECT_NE(core::RandomForRow(1, 0), core::RandomForRow(2, 0));
}

// Finds a fresh SHA-256-prefix collision among room-sim style ids with a small birthday search
// (about 2^16 ids), so the property does not rest on one known pair; then checks the row ids.
TEST(ImRequestTest, Sha256PrefixCollisionsFoundBySearchDoNotCollideAsRows) {
  std::unordered_map<uint32_t, int64_t> seen;
  int64_t first = -1;
  int64_t second = -1;
  for (int64_t n = 1; n <= 400'000 && second < 0; ++n) {
    auto [it, inserted] = seen.emplace(Sha256Prefix("simtest-c" + std::to_string(n) + "-e0"), n);
    if (!inserted) {
      first = it->second;
      second = n;
    }
  }
  ASSERT_GT(second, 0) << "a 32-bit birthday search over 400k ids finds a pair";
  EXPECT_NE(core::RandomForRow(first, 0), core::RandomForRow(second, 0));
}

// Property: over many rows and drop generations, no two distinct (row, generation) pairs that
// may meet within one 5-minute window share a Random.
TEST(ImRequestTest, DistinctRowsNeverShareARandomWithinTheWindowBound) {
  // A window of 200,000 consecutive rows (over 5 minutes at 600 sends/s, three times IM's
  // default budget), each with drop generations 0..15, starting at an id just below 2^32 so that
  // the sums wrap.
  const int64_t base = (int64_t{1} << 32) - 100'000;
  std::vector<uint32_t> randoms;
  randoms.reserve(200'000 * 16);
  for (int64_t id = base; id < base + 200'000; ++id) {
    for (uint32_t g = 0; g < 16; ++g) {
      randoms.push_back(core::RandomForRow(id, g));
    }
  }
  std::sort(randoms.begin(), randoms.end());
  EXPECT_EQ(std::adjacent_find(randoms.begin(), randoms.end()), randoms.end())
      << "two (row, generation) pairs of the window share a Random";
  // Same generation: rows up to 2^32 - 1 apart never collide (spot checks across the range).
  for (int64_t d : {int64_t{1}, int64_t{1} << 20, int64_t{1} << 31, (int64_t{1} << 32) - 1}) {
    EXPECT_NE(core::RandomForRow(5, 0), core::RandomForRow(5 + d, 0)) << d;
  }
  // Same row: generations 0..2^18 are all distinct.
  std::unordered_set<uint32_t> generations;
  for (uint32_t g = 0; g <= (1u << 18); ++g) {
    ASSERT_TRUE(generations.insert(core::RandomForRow(99, g)).second) << g;
  }
}

TEST(ImRequestTest, RetryAfterADropGetsAnotherRandomAndOtherwiseTheSame) {
  EXPECT_EQ(core::RandomForRow(42, 0), core::RandomForRow(42, 0));
  EXPECT_NE(core::RandomForRow(42, 0), core::RandomForRow(42, 1));
  EXPECT_NE(core::RandomForRow(42, 1), core::RandomForRow(42, 2));
}

TEST(ImRequestTest, PriorityNamesRoundTrip) {
  for (MsgPriority p : {MsgPriority::kHigh, MsgPriority::kNormal, MsgPriority::kLow}) {
    EXPECT_EQ(ParseMsgPriority(MsgPriorityName(p)), p);
  }
  EXPECT_STREQ(MsgPriorityName(MsgPriority::kHigh), "High");
  EXPECT_STREQ(MsgPriorityName(MsgPriority::kNormal), "Normal");
  EXPECT_STREQ(MsgPriorityName(MsgPriority::kLow), "Low");
  EXPECT_FALSE(ParseMsgPriority("high"));
  EXPECT_FALSE(ParseMsgPriority("Lowest"));
  EXPECT_FALSE(ParseMsgPriority(""));
}

TEST(ImRequestTest, PriorityForTypeUsesTheTableThenTheDefault) {
  TencentImOptions options;
  EXPECT_EQ(core::PriorityForType(options, "RoomGiftSent"), MsgPriority::kHigh) << "the default";
  options.msg_priority = MsgPriority::kNormal;
  options.priority_by_type["RoomHeatChanged"] = MsgPriority::kLow;
  EXPECT_EQ(core::PriorityForType(options, "RoomGiftSent"), MsgPriority::kNormal);
  EXPECT_EQ(core::PriorityForType(options, "RoomHeatChanged"), MsgPriority::kLow);
}

TEST(ImRequestTest, BodyHasExactBytesForSample) {
  auto body = core::BuildSendGroupMsgBody(Sample(), "live_", 2067832723u, MsgPriority::kHigh);
  ASSERT_TRUE(body) << body.error().message;
  const char* expected =
      R"({"GroupId":"live_r42","Random":2067832723,"MsgPriority":"High",)"
      R"("MsgBody":[{"MsgType":"TIMCustomElem",)"
      R"("MsgContent":{"Data":"{\"event_id\":\"evt-1\",\"event_type\":\"RoomGiftSent\",)"
      R"(\"room_id\":\"r42\",\"room_seq\":7,\"command_id\":\"cmd-1\",\"request_id\":\"req-1\",)"
      R"(\"node_id\":\"node-a\",\"occurred_at_ms\":1700000000123,\"payload\":{\"gift\":\"rose\"}}",)"
      R"("Desc":"RoomGiftSent","Ext":"evt-1"}}]})";
  EXPECT_EQ(*body, expected);
}

TEST(ImRequestTest, BodyIsByteIdenticalOnEveryBuild) {
  auto first = core::BuildSendGroupMsgBody(Sample(), "", 5, MsgPriority::kLow);
  auto second = core::BuildSendGroupMsgBody(Sample(), "", 5, MsgPriority::kLow);
  ASSERT_TRUE(first);
  ASSERT_TRUE(second);
  EXPECT_EQ(*first, *second);
  auto doc = nlohmann::json::parse(*first);
  EXPECT_EQ(doc["GroupId"], "r42");
  EXPECT_EQ(doc["Random"], 5);
  EXPECT_EQ(doc["MsgPriority"], "Low");
}

TEST(ImRequestTest, WrittenBodiesAreTheBuiltBodiesWithOrWithoutTheEncodedEnvelope) {
  Envelope other = Sample();
  other.room_id = "a-longer-room-id";
  other.payload = R"({"k":"v"})";
  core::JsonWriter body;
  core::JsonWriter scratch;
  for (const Envelope& e : {Sample(), other, Sample()}) {
    const std::string expected =
        core::BuildSendGroupMsgBody(e, "live_", 9, MsgPriority::kNormal).value();
    ASSERT_TRUE(
        core::WriteSendGroupMsgBody(body, scratch, e, {}, "live_", 9, MsgPriority::kNormal).ok());
    EXPECT_EQ(body.text(), expected);
    const std::string json = core::EncodeEnvelope(e).value();
    ASSERT_TRUE(
        core::WriteSendGroupMsgBody(body, scratch, e, json, "live_", 9, MsgPriority::kNormal).ok());
    EXPECT_EQ(body.text(), expected);
  }
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
    auto body = core::BuildSendGroupMsgBody(c.envelope, "live_", 1, MsgPriority::kHigh);
    ASSERT_FALSE(body) << c.name;
    EXPECT_EQ(body.error().code, ErrorCode::kInvalidArgument) << c.name;
  }
}

TEST(ImRequestTest, UrlCarriesQueryInDocumentedOrder) {
  EXPECT_EQ(core::BuildSendGroupMsgUrl("https://console.tim.qq.com", 1400000000, "administrator",
                                       "eJyr*-_", 4294967295u),
            "https://console.tim.qq.com/v4/group_open_http_svc/send_group_msg"
            "?sdkappid=1400000000&identifier=administrator&usersig=eJyr*-_&random=4294967295"
            "&contenttype=json");
}

TEST(ImRequestTest, TargetIsTheUrlBelowTheEndpointForEveryRequest) {
  core::SendGroupMsgTarget target(1400000000, "ad min");
  const std::string endpoint = "https://console.tim.qq.com";
  const std::pair<std::string, uint32_t> requests[] = {
      {"a-long-usersig-*-_-0123456789", 4294967295u}, {"s", 0}, {"eJyr", 77}};
  for (const auto& [usersig, random] : requests) {
    EXPECT_EQ(endpoint + target.For(usersig, random),
              core::BuildSendGroupMsgUrl(endpoint, 1400000000, "ad min", usersig, random));
  }
  EXPECT_EQ(target.For("s", 1).rfind(core::kSendGroupMsgPath, 0), 0u);
}

TEST(ImRequestTest, UrlPercentEncodesIdentifier) {
  std::string url = core::BuildSendGroupMsgUrl("http://127.0.0.1:8080", 1, "ad min&x=1/é", "s", 0);
  EXPECT_NE(url.find("identifier=ad%20min%26x%3D1%2F%C3%A9&"), std::string::npos) << url;
  EXPECT_NE(url.find("&random=0&"), std::string::npos) << url;
}

}  // namespace
}  // namespace room_outbox
