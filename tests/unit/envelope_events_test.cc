// ReadEnvelopeEvents gives what the full parse gives for every envelope it answers, and leaves
// every other text to the full parse, whose answer DecodeEnvelope keeps.
#include "core/envelope_events.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "core/envelope_codec.h"

namespace room_outbox {
namespace {

// The envelope as a document parse reads it (the reference), or nullopt when a field is missing
// or of another type, or an identifier is empty.
std::optional<Envelope> ParsedAsDocument(const std::string& text) {
  const auto doc = nlohmann::json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    return std::nullopt;
  }
  for (const char* key : {"event_id", "event_type", "room_id", "command_id", "request_id",
                          "node_id"}) {
    if (!doc.contains(key) || !doc[key].is_string()) return std::nullopt;
  }
  for (const char* key : {"room_seq", "occurred_at_ms"}) {
    if (!doc.contains(key) || !doc[key].is_number_integer()) return std::nullopt;
  }
  if (!doc.contains("payload") || !doc["payload"].is_object() ||
      doc["event_id"].get<std::string>().empty()) {
    return std::nullopt;
  }
  return Envelope{doc["event_id"],   doc["event_type"], doc["room_id"],
                  doc["room_seq"],   doc["command_id"], doc["request_id"],
                  doc["node_id"],    doc["occurred_at_ms"], doc["payload"].dump()};
}

void ExpectSame(const Envelope& a, const Envelope& b, const std::string& text) {
  EXPECT_EQ(a.event_id, b.event_id) << text;
  EXPECT_EQ(a.event_type, b.event_type) << text;
  EXPECT_EQ(a.room_id, b.room_id) << text;
  EXPECT_EQ(a.room_seq, b.room_seq) << text;
  EXPECT_EQ(a.command_id, b.command_id) << text;
  EXPECT_EQ(a.request_id, b.request_id) << text;
  EXPECT_EQ(a.node_id, b.node_id) << text;
  EXPECT_EQ(a.occurred_at_ms, b.occurred_at_ms) << text;
  EXPECT_EQ(a.payload, b.payload) << text;
}

const std::string kHead =
    R"({"event_id":"e-1","event_type":"RoomGiftSent","room_id":"r-1","room_seq":7,)"
    R"("command_id":"c-1","request_id":"","node_id":"n-1","occurred_at_ms":-5,)";

TEST(EnvelopeEventsTest, AnEnvelopeAsTheHookWritesItIsReadFromTheEvents) {
  for (const std::string payload :
       {R"({})", R"({"gift":"rose","list":[1,[2,{}],{"a":null,"b":1.5}],"z":-1})",
        R"({"esc":"\u00e9 \"q\" \ud83c\udf81","u":18446744073709551615})"}) {
    const std::string text = kHead + R"("payload":)" + payload + "}";
    core::JsonWriter scratch;
    auto read = core::ReadEnvelopeEvents(text, scratch);
    ASSERT_TRUE(read.has_value()) << text;
    ExpectSame(*read, *ParsedAsDocument(text), text);
  }
}

TEST(EnvelopeEventsTest, FieldsInAnyOrderWithSpacesAreReadToo) {
  const std::string text =
      R"( { "payload" : {"a":1} , "occurred_at_ms":9223372036854775807, "node_id":"n",)"
      R"( "request_id":"q", "command_id":"c", "room_seq":0, "room_id":"r", "event_type":"t",)"
      R"( "event_id":"e" } )";
  core::JsonWriter scratch;
  auto read = core::ReadEnvelopeEvents(text, scratch);
  ASSERT_TRUE(read.has_value());
  ExpectSame(*read, *ParsedAsDocument(text), text);
}

// Texts the events leave to the full parse: DecodeEnvelope then gives the full parse's answer.
TEST(EnvelopeEventsTest, AnythingElseIsLeftToTheFullParse) {
  const std::string tail = R"("payload":{"a":1}})";
  const std::vector<std::string> left = {
      kHead + R"("payload":{"b":1,"a":2}})",                  // payload keys out of order
      kHead + R"("extra":1,)" + tail,                          // a field the envelope has not
      kHead + R"("room_id":"r-2",)" + tail,                    // a repeated field (last wins)
      R"({"event_id":"","event_type":"t","room_id":"r","room_seq":1,"command_id":"",)"
      R"("request_id":"","node_id":"","occurred_at_ms":1,"payload":{}})",  // an empty id
      R"({"event_id":"e","event_type":"t","room_id":"r","room_seq":1.5,"command_id":"",)"
      R"("request_id":"","node_id":"","occurred_at_ms":1,"payload":{}})",  // not an integer
      R"({"event_id":"e","event_type":"t","room_id":"r","room_seq":9223372036854775808,)"
      R"("command_id":"","request_id":"","node_id":"","occurred_at_ms":1,"payload":{}})",
      kHead + R"("payload":[1]})",                              // payload not an object
      kHead + R"("payload":"{}"})",
      R"({"event_id":"e","payload":{}})",                      // missing fields
      kHead + tail + " {}",                                     // a second document
      kHead + R"("payload":{"a":1})",                          // cut short
      R"([1,2])",
  };
  for (const std::string& text : left) {
    core::JsonWriter scratch;
    EXPECT_FALSE(core::ReadEnvelopeEvents(text, scratch).has_value()) << text;
    auto decoded = core::DecodeEnvelope(text);
    auto reference = ParsedAsDocument(text);
    if (reference.has_value()) {
      ASSERT_TRUE(decoded) << text << ": " << decoded.error().message;
      ExpectSame(*decoded, *reference, text);
    } else {
      EXPECT_FALSE(decoded) << text;
    }
  }
}

TEST(EnvelopeEventsTest, RandomEnvelopesDecodeAsTheirDocumentParse) {
  std::mt19937 random(20261202);
  const char* keys[] = {"a", "b", "gift", "user_id", "value", "\xc3\xa9"};
  for (int n = 0; n < 1000; ++n) {
    nlohmann::json payload = nlohmann::json::object();
    for (int k = random() % 5; k > 0; --k) {
      payload[keys[random() % 6]] = (random() % 2 == 0)
                                        ? nlohmann::json(static_cast<int64_t>(random()) - 99999)
                                        : nlohmann::json(std::to_string(random()));
    }
    Envelope in{"e-" + std::to_string(n), "t", "room-" + std::to_string(random() % 50),
                static_cast<int64_t>(random()), "c", "q", "n",
                -static_cast<int64_t>(random()), payload.dump()};
    auto text = core::EncodeEnvelope(in);
    ASSERT_TRUE(text);
    core::JsonWriter scratch;
    auto read = core::ReadEnvelopeEvents(*text, scratch);
    ASSERT_TRUE(read.has_value()) << *text;
    ExpectSame(*read, in, *text);
  }
}

}  // namespace
}  // namespace room_outbox
