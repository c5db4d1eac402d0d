#include "core/envelope_codec.h"

#include <gtest/gtest.h>

#include <string>

namespace room_outbox {
namespace {

Envelope Sample() {
  Envelope e;
  e.event_id = "evt-1";
  e.event_type = "RoomGiftSent";
  e.room_id = "房间-42";
  e.room_seq = 7;
  e.command_id = "cmd-1";
  e.request_id = "req-1";
  e.node_id = "node-a";
  e.occurred_at_ms = 1700000000123;
  e.payload = R"({"gift":"rose", "count": 3})";
  return e;
}

TEST(EnvelopeCodecTest, RoundTripKeepsEveryField) {
  auto text = core::EncodeEnvelope(Sample());
  ASSERT_TRUE(text) << text.error().message;
  auto back = core::DecodeEnvelope(*text);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->event_id, "evt-1");
  EXPECT_EQ(back->event_type, "RoomGiftSent");
  EXPECT_EQ(back->room_id, "房间-42");
  EXPECT_EQ(back->room_seq, 7);
  EXPECT_EQ(back->command_id, "cmd-1");
  EXPECT_EQ(back->request_id, "req-1");
  EXPECT_EQ(back->node_id, "node-a");
  EXPECT_EQ(back->occurred_at_ms, 1700000000123);
  EXPECT_EQ(back->payload, R"({"count":3,"gift":"rose"})");
}

TEST(EnvelopeCodecTest, EncodingIsStableAcrossDecodeAndEncode) {
  auto first = core::EncodeEnvelope(Sample());
  ASSERT_TRUE(first);
  auto decoded = core::DecodeEnvelope(*first);
  ASSERT_TRUE(decoded);
  auto second = core::EncodeEnvelope(*decoded);
  ASSERT_TRUE(second);
  EXPECT_EQ(*first, *second);
  EXPECT_EQ(first->rfind(R"({"event_id":"evt-1","event_type":"RoomGiftSent",)", 0), 0u) << *first;
}

TEST(EnvelopeCodecTest, WriteEnvelopeWritesWhatEncodeEnvelopeReturnsIntoAReusedWriter) {
  Envelope shorter = Sample();
  shorter.room_id = "r";
  shorter.payload = "{}";
  core::JsonWriter writer;
  for (const Envelope& e : {Sample(), shorter, Sample()}) {
    ASSERT_TRUE(core::WriteEnvelope(writer, core::FieldsOf(e)).ok());
    EXPECT_EQ(writer.text(), core::EncodeEnvelope(e).value());
  }
}

TEST(EnvelopeCodecTest, DecodeWithAWriterAlsoGivesTheEncodingOfWhatItDecoded) {
  core::JsonWriter encoded;
  const std::string canonical = core::EncodeEnvelope(Sample()).value();
  ASSERT_TRUE(core::DecodeEnvelope(canonical, encoded));
  EXPECT_EQ(encoded.text(), canonical);
  // Another writer's text (spaces, unsorted payload keys) is re-encoded as the hook writes it.
  const std::string loose =
      R"({ "payload": {"z":1, "a":[1.50, "\u00e9"]}, "event_id":"e","event_type":"X",)"
      R"("room_id":"r","command_id":"c","request_id":"","node_id":"n","room_seq":2,)"
      R"("occurred_at_ms":3 })";
  auto decoded = core::DecodeEnvelope(loose, encoded);
  ASSERT_TRUE(decoded) << decoded.error().message;
  EXPECT_EQ(encoded.text(), core::EncodeEnvelope(*decoded).value());
  EXPECT_NE(encoded.text(), loose);
  EXPECT_FALSE(core::DecodeEnvelope("{oops", encoded));
  EXPECT_TRUE(encoded.text().empty()) << "nothing decoded, nothing encoded";
}

TEST(EnvelopeCodecTest, EncodeRejectsPayloadThatIsNotAnObject) {
  Envelope e = Sample();
  e.payload = "[1,2]";
  auto text = core::EncodeEnvelope(e);
  ASSERT_FALSE(text);
  EXPECT_EQ(text.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(text.error().message.find("payload"), std::string::npos);
}

TEST(EnvelopeCodecTest, EncodeRejectsInvalidUtf8) {
  Envelope e = Sample();
  e.room_id = std::string("bad\xff", 4);
  auto text = core::EncodeEnvelope(e);
  ASSERT_FALSE(text);
  EXPECT_EQ(text.error().code, ErrorCode::kInvalidArgument);
}

TEST(EnvelopeCodecTest, DecodeNamesTheFieldAtFault) {
  struct Case {
    const char* name;
    const char* json;
    const char* expect;
  } cases[] = {
      {"not json", "{oops", "not valid JSON"},
      {"array", "[1]", "not a JSON object"},
      {"missing event_id", R"({"event_type":"X","room_id":"r"})", "event_id"},
      {"empty room_id",
       R"({"event_id":"e","event_type":"X","room_id":"","command_id":"","request_id":"","node_id":"","room_seq":1,"occurred_at_ms":1,"payload":{}})",
       "room_id is empty"},
      {"seq not integer",
       R"({"event_id":"e","event_type":"X","room_id":"r","command_id":"","request_id":"","node_id":"","room_seq":"1","occurred_at_ms":1,"payload":{}})",
       "room_seq"},
      {"payload string",
       R"({"event_id":"e","event_type":"X","room_id":"r","command_id":"","request_id":"","node_id":"","room_seq":1,"occurred_at_ms":1,"payload":"x"})",
       "payload is not an object"},
  };
  for (const auto& c : cases) {
    auto r = core::DecodeEnvelope(c.json);
    ASSERT_FALSE(r) << c.name;
    EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument) << c.name;
    EXPECT_NE(r.error().message.find(c.expect), std::string::npos)
        << c.name << ": " << r.error().message;
  }
}

}  // namespace
}  // namespace room_outbox
