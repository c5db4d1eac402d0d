// JsonWriter writes what nlohmann::json::dump() writes, into one reused buffer.
#include "core/json_writer.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>

namespace room_outbox {
namespace {

TEST(JsonWriterTest, StringsAreEscapedAsDumpEscapesThem) {
  const std::string texts[] = {"", "plain", "quote \" backslash \\ slash /",
                               std::string("nul \0 tab \t newline \n", 22), "\x01\x1f\x7f",
                               "房间-42 \xf0\x9f\x8e\x81"};
  core::JsonWriter writer;
  for (const std::string& text : texts) {
    writer.Clear();
    writer.String(text);
    EXPECT_EQ(writer.text(), nlohmann::json(text).dump()) << text;
  }
}

// Every ASCII byte, alone and beside plain text, in one part and in two: the plain ones are
// copied as they are, the others escaped, as dump() does.
TEST(JsonWriterTest, EveryAsciiByteIsWrittenAsDumpWritesIt) {
  core::JsonWriter writer;
  for (int c = 0; c < 0x80; ++c) {
    const std::string byte(1, static_cast<char>(c));
    for (const std::string& text : {byte, "room-" + byte + "-1"}) {
      writer.Clear();
      writer.String(text);
      EXPECT_EQ(writer.text(), nlohmann::json(text).dump()) << c;
      writer.Clear();
      writer.String("live_", text);
      EXPECT_EQ(writer.text(), nlohmann::json("live_" + text).dump()) << c;
    }
  }
}

TEST(JsonWriterTest, TwoPartsMakeOneString) {
  core::JsonWriter writer;
  writer.String("live_", "\"r\"");
  EXPECT_EQ(writer.text(), nlohmann::json("live_\"r\"").dump());
}

TEST(JsonWriterTest, InvalidUtf8Throws) {
  core::JsonWriter writer;
  EXPECT_THROW(writer.String("bad \xff"), nlohmann::json::type_error);
  EXPECT_THROW(writer.String("ok", "\xc3"), nlohmann::json::type_error);
}

TEST(JsonWriterTest, IntegersAndValuesAreWrittenAsDumpWritesThem) {
  core::JsonWriter writer;
  for (int64_t value : {int64_t{0}, int64_t{-7}, std::numeric_limits<int64_t>::min(),
                        std::numeric_limits<int64_t>::max()}) {
    writer.Clear();
    writer.Integer(value);
    EXPECT_EQ(writer.text(), nlohmann::json(value).dump());
  }
  const nlohmann::json doc = nlohmann::json::parse(R"({"b":[1.5,true,null],"a":"\u00e9"})");
  writer.Clear();
  writer.Value(doc);
  EXPECT_EQ(writer.text(), doc.dump());
}

TEST(JsonWriterTest, ClearKeepsTheBufferAndAppendsFollowTheText) {
  core::JsonWriter writer;
  writer.Raw("{\"k\":");
  writer.String("a long enough value to need the heap");
  writer.Raw("}");
  EXPECT_EQ(writer.text(), R"({"k":"a long enough value to need the heap"})");
  const size_t capacity = writer.text().capacity();
  writer.Clear();
  EXPECT_TRUE(writer.text().empty());
  writer.Raw("[");
  writer.Integer(1);
  writer.Raw("]");
  EXPECT_EQ(writer.text(), "[1]");
  EXPECT_EQ(writer.text().capacity(), capacity);
}

}  // namespace
}  // namespace room_outbox
