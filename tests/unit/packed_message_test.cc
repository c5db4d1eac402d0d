// The RoomEventBatch form of a packed message (pack_max_events): its Random, its exact bytes, its
// size reckoned event by event, and the publisher's choice of form.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/envelope_codec.h"
#include "core/json_writer.h"
#include "core/tencent/im_request.h"

namespace room_outbox {
namespace {

Envelope Event(int n, std::string payload = R"({"gift":"rose"})") {
  Envelope e;
  e.event_id = "evt-" + std::to_string(n);
  e.event_type = "RoomGiftSent";
  e.room_id = "r42";
  e.room_seq = n;
  e.command_id = "cmd-" + std::to_string(n);
  e.node_id = "node-a";
  e.occurred_at_ms = 1700000000000 + n;
  e.payload = std::move(payload);
  return e;
}

std::string Encoded(const Envelope& e) { return core::EncodeEnvelope(e).value(); }

// The least distance from 0 of k * S + j * T mod 2^32 over |k| <= max_k, 1 <= |j| <= 99: two
// packs of distinct sizes whose drop generations differ by at most max_k can share a Random only
// this many first-row ids apart.
uint32_t PackMinDistance(int max_k) {
  uint32_t best = UINT32_MAX;
  for (int k = -max_k; k <= max_k; ++k) {
    for (int j = 1; j <= 99; ++j) {
      const auto v = static_cast<uint32_t>(static_cast<int64_t>(k) * core::kRandomStride +
                                           static_cast<int64_t>(j) * core::kPackStride);
      best = std::min({best, v, static_cast<uint32_t>(0u - v)});
    }
  }
  return best;
}

TEST(PackedMessageTest, APackOfOneHasTheRowsRandomAndEachSizeItsOwn) {
  EXPECT_EQ(core::RandomForPack(7, 0, 1), core::RandomForRow(7, 0));
  EXPECT_EQ(core::RandomForPack(7, 2, 1), core::RandomForRow(7, 2));
  EXPECT_EQ(core::RandomForPack(7, 0, 3), static_cast<uint32_t>(7u + 2u * core::kPackStride));
  EXPECT_EQ(core::RandomForPack(7, 1, 20), core::RandomForPack(7, 1, 20)) << "a resend";
  EXPECT_NE(core::RandomForPack(7, 0, 20), core::RandomForPack(7, 0, 21));
  EXPECT_NE(core::RandomForPack(7, 0, 20), core::RandomForPack(7, 1, 20)) << "after a drop";
  EXPECT_EQ(core::kPackStride % 2, 1u);
}

TEST(PackedMessageTest, TheBoundsInTheCommentHold) {
  EXPECT_EQ(PackMinDistance(0), 10'460'417u);
  EXPECT_EQ(PackMinDistance(15), 2'480'188u);
  EXPECT_EQ(PackMinDistance(63), 319'799u);
}

TEST(PackedMessageTest, PacksOfOneRoomWithinTheBoundNeverShareARandom) {
  // Every pack a relay could send from 2,000 consecutive rows: each first row, each size, drop
  // generations 0..3.
  std::vector<uint32_t> seen;
  for (int64_t first = 1'000'000; first < 1'002'000; ++first) {
    for (size_t events = 1; events <= 100; ++events) {
      for (uint32_t gen = 0; gen < 4; ++gen) seen.push_back(core::RandomForPack(first, gen, events));
    }
  }
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(std::adjacent_find(seen.begin(), seen.end()), seen.end());
}

TEST(PackedMessageTest, ABatchBodyHasExactBytes) {
  const Envelope a = Event(1);
  const Envelope b = Event(2, R"({"note":"a \"quoted\" word"})");
  const std::string ja = Encoded(a);
  const std::string jb = Encoded(b);
  const std::vector<std::string_view> batch = {ja, jb};
  core::JsonWriter body;
  ASSERT_TRUE(core::WriteSendGroupMsgBody(
                  body, core::SendGroupMsgParts{{}, "r42", {}, "evt-1", "live_", 99,
                                                MsgPriority::kNormal, batch})
                  .ok());
  const nlohmann::json parsed = nlohmann::json::parse(body.text());
  EXPECT_EQ(parsed["GroupId"], "live_r42");
  EXPECT_EQ(parsed["Random"], 99);
  EXPECT_EQ(parsed["MsgPriority"], "Normal");
  const nlohmann::json& content = parsed["MsgBody"][0]["MsgContent"];
  EXPECT_EQ(parsed["MsgBody"][0]["MsgType"], "TIMCustomElem");
  EXPECT_EQ(content["Desc"], "RoomEventBatch");
  EXPECT_EQ(content["Ext"], "evt-1");
  EXPECT_EQ(content["Data"], R"({"events":[)" + ja + "," + jb + "]}");
  const nlohmann::json data = nlohmann::json::parse(content["Data"].get<std::string>());
  ASSERT_EQ(data["events"].size(), 2u);
  EXPECT_EQ(data["events"][1]["payload"]["note"], R"(a "quoted" word)");
  EXPECT_EQ(body.text().find(R"({"GroupId":"live_r42","Random":99,"MsgPriority":"Normal",)"), 0u)
      << "the single form's key order";
}

TEST(PackedMessageTest, OneEventInTheBatchKeepsTheSingleForm) {
  const std::string ja = Encoded(Event(1));
  const std::vector<std::string_view> batch = {ja};
  core::JsonWriter packed;
  core::JsonWriter single;
  ASSERT_TRUE(core::WriteSendGroupMsgBody(
                  packed, core::SendGroupMsgParts{ja, "r42", "RoomGiftSent", "evt-1", "", 5,
                                                  MsgPriority::kHigh, batch})
                  .ok());
  ASSERT_TRUE(core::WriteSendGroupMsgBody(
                  single, core::SendGroupMsgParts{ja, "r42", "RoomGiftSent", "evt-1", "", 5,
                                                  MsgPriority::kHigh, {}})
                  .ok());
  EXPECT_EQ(packed.text(), single.text());
}

TEST(PackedMessageTest, ThePackSizeIsNeverUnderTheBodyAndAtMostTwelveOver) {
  const std::string group_prefix = "live_\t";  // an escaped byte in the group id
  std::vector<std::string> texts;
  for (int n = 1; n <= 30; ++n) {
    // Quotes and control bytes escape to more than one byte each.
    const std::string payload =
        nlohmann::json{{"note", std::string(static_cast<size_t>(n), '"') + "\n\x01"}}.dump();
    texts.push_back(Encoded(Event(n, payload)));
  }
  core::PackBodySize size(group_prefix, "r42", "evt-1");
  std::vector<std::string_view> batch;
  core::JsonWriter body;
  for (const std::string& text : texts) {
    const size_t predicted = size.With(text);
    size.Add(text);
    batch.push_back(text);
    if (batch.size() < 2) continue;
    for (uint32_t random : {0u, 4294967295u}) {
      for (MsgPriority priority : {MsgPriority::kHigh, MsgPriority::kNormal, MsgPriority::kLow}) {
        ASSERT_TRUE(core::WriteSendGroupMsgBody(
                        body, core::SendGroupMsgParts{{}, "r42", {}, "evt-1", group_prefix,
                                                      random, priority, batch})
                        .ok());
        EXPECT_GE(predicted, body.text().size());
        EXPECT_LE(predicted, body.text().size() + 12);
      }
    }
  }
  EXPECT_EQ(size.events(), texts.size());
}

TEST(PackedMessageTest, StringLengthIsWhatStringWrites) {
  std::string every_ascii;
  for (int c = 1; c < 128; ++c) every_ascii.push_back(static_cast<char>(c));
  for (std::string text : {std::string(), std::string("plain"), every_ascii,
                           std::string("\xe4\xbd\xa0\xe5\xa5\xbd \"x\" \\ \x7f")}) {
    core::JsonWriter writer;
    writer.String(text);
    EXPECT_EQ(core::JsonWriter::StringLength(text), writer.text().size()) << text;
  }
}

TEST(PackedMessageTest, APacksPriorityIsItsEventsHighest) {
  EXPECT_EQ(core::HigherPriority(MsgPriority::kLow, MsgPriority::kNormal), MsgPriority::kNormal);
  EXPECT_EQ(core::HigherPriority(MsgPriority::kHigh, MsgPriority::kLow), MsgPriority::kHigh);
  EXPECT_EQ(core::HigherPriority(MsgPriority::kLow, MsgPriority::kLow), MsgPriority::kLow);
}

}  // namespace
}  // namespace room_outbox
