// WriteSortedJson writes what dump() of the parse writes, or refuses; the envelope's encoding is
// the same bytes either way.
#include "core/sorted_json.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "core/envelope_codec.h"

namespace room_outbox {
namespace {

// Objects whose keys are in ascending order at every depth, in every value form.
const std::vector<std::string> kSorted = {
    R"({})",
    R"({"a":1})",
    R"( { "gift" : "rose" , "user_id" : "u-1" , "value" : 42 } )",
    R"({"a":-0,"b":-7,"c":18446744073709551615,"d":9223372036854775807,"e":-9223372036854775808})",
    R"({"f":1.0,"g":1e3,"h":-2.5E-3,"i":0.1,"j":123456789.123456789})",
    R"({"n":null,"t":true,"u":false})",
    R"({"esc":"quote \" slash \/ tab \t \u0001 \u00e9 \ud83c\udf81","raw":"房间"})",
    R"({"list":[1,[2,[]],{"a":[{}],"b":"x"},null,"s"],"z":{"a":{"b":{"c":{}}}}})",
    R"({"":0,"A":1,"a":2,"aa":3,"b":4})",
    "{\"\xc3\xa9\":1,\"\xe6\x88\xbf\":2}",
};

// Texts WriteSortedJson leaves to the caller's parse.
const std::vector<std::string> kRefused = {
    R"({"b":1,"a":2})",          // keys out of order
    R"({"a":1,"a":2})",          // a repeated key (the parse keeps the last)
    R"({"a":{"y":1,"x":2}})",    // out of order inside
    R"({"a":[{"b":1,"a":1}]})",  // out of order inside an array
    R"([1,2])",                  // not an object
    R"("text")",
    R"(7)",
    R"(null)",
    R"({"a":1)",
    R"({"a":1}})",
    R"({"a":1} {"b":2})",
    R"({"a":01})",
    "{\"a\":\"\xff\"}",  // invalid UTF-8
    R"({"a":1 /* comment */})",
};

TEST(SortedJsonTest, SortedTextIsWrittenAsDumpOfItsParse) {
  for (const std::string& text : kSorted) {
    core::JsonWriter writer;
    ASSERT_TRUE(core::WriteSortedJson(writer, text)) << text;
    EXPECT_EQ(writer.text(), nlohmann::json::parse(text).dump()) << text;
  }
}

TEST(SortedJsonTest, AnyOtherTextIsRefused) {
  for (const std::string& text : kRefused) {
    core::JsonWriter writer;
    EXPECT_FALSE(core::WriteSortedJson(writer, text)) << text;
  }
}

// A random document of nested objects and arrays holding every kind of value.
nlohmann::json RandomValue(std::mt19937& random, int depth) {
  const char* keys[] = {"", "a", "B", "ab", "b", "\xc3\xa9", "k\"q", "z", "10", "9"};
  std::uniform_int_distribution<int> kind(0, depth >= 4 ? 5 : 7);
  switch (kind(random)) {
    case 0:
      return nullptr;
    case 1:
      return random() % 2 == 0;
    case 2:
      return static_cast<int64_t>(random()) - (1LL << 31);
    case 3:
      return static_cast<uint64_t>(random()) << 33;
    case 4:
      return static_cast<double>(random()) / 7.0;
    case 5:
      return std::string(keys[random() % 10]) + "\n\t\x01";
    case 6: {
      nlohmann::json list = nlohmann::json::array();
      for (int n = random() % 4; n > 0; --n) list.push_back(RandomValue(random, depth + 1));
      return list;
    }
    default: {
      nlohmann::json object = nlohmann::json::object();
      for (int n = random() % 5; n > 0; --n)
        object[keys[random() % 10]] = RandomValue(random, depth + 1);
      return object;
    }
  }
}

// The same document with every object's keys in reverse order (a producer that does not sort).
std::string Reversed(const nlohmann::json& value) {
  if (value.is_object()) {
    std::string out = "{";
    for (auto it = value.crbegin(); it != value.crend(); ++it) {
      out += (out.size() > 1 ? ", " : "") + nlohmann::json(it.key()).dump() + ": " + Reversed(*it);
    }
    return out + "}";
  }
  if (value.is_array()) {
    std::string out = "[";
    for (const auto& element : value) out += (out.size() > 1 ? ", " : "") + Reversed(element);
    return out + "]";
  }
  return value.dump();
}

TEST(SortedJsonTest, RandomDocumentsAreWrittenAsDumpOrRefused) {
  std::mt19937 random(20261202);
  for (int n = 0; n < 2000; ++n) {
    nlohmann::json doc = nlohmann::json::object();
    for (int k = random() % 6; k > 0; --k)
      doc["k" + std::to_string(random() % 8)] = RandomValue(random, 1);
    const std::string dumped = doc.dump();
    core::JsonWriter writer;
    ASSERT_TRUE(core::WriteSortedJson(writer, dumped)) << dumped;
    EXPECT_EQ(writer.text(), dumped);
    core::JsonWriter other;
    const std::string reversed = Reversed(doc);
    if (core::WriteSortedJson(other, reversed)) {
      EXPECT_EQ(other.text(), dumped) << reversed;  // only when no object had two keys
    }
    auto encoded = core::EncodeEnvelope(Envelope{"e", "t", "r", 1, "c", "q", "n", 2, reversed});
    ASSERT_TRUE(encoded) << reversed;
    EXPECT_TRUE(encoded->ends_with("\"payload\":" + dumped + "}")) << reversed;
  }
}

TEST(SortedJsonTest, TheEnvelopeIsTheSameBytesWhateverTheKeyOrder) {
  std::vector<std::string> payloads = kSorted;
  payloads.insert(payloads.end(), {R"({"b":1,"a":2})", R"({"a":1,"a":2})",
                                   R"({"z":[{"y":1,"x":2.50}],"a":"\u00e9"})"});
  for (const std::string& payload : payloads) {
    Envelope envelope{"ev-1", "RoomGiftSent", "room-1", 3, "cmd-1", "req-1", "node", 99, payload};
    auto encoded = core::EncodeEnvelope(envelope);
    ASSERT_TRUE(encoded) << payload;
    const nlohmann::json doc = nlohmann::json::parse(*encoded);
    EXPECT_EQ(doc["payload"].dump(), nlohmann::json::parse(payload).dump()) << payload;
    // The envelope's own fields in their fixed order, then the payload as dump() writes it.
    EXPECT_EQ(*encoded,
              R"({"event_id":"ev-1","event_type":"RoomGiftSent","room_id":"room-1","room_seq":3,)"
              R"("command_id":"cmd-1","request_id":"req-1","node_id":"node","occurred_at_ms":99,)"
              R"("payload":)" +
                  nlohmann::json::parse(payload).dump() + "}")
        << payload;
  }
}

TEST(SortedJsonTest, ABadPayloadStillFailsTheEnvelope) {
  for (const std::string payload : {R"([1])", R"({"a":)", "{\"a\":\"\xff\"}"}) {
    Envelope envelope{"ev-1", "RoomGiftSent", "room-1", 3, "cmd-1", "req-1", "node", 99, payload};
    auto encoded = core::EncodeEnvelope(envelope);
    ASSERT_FALSE(encoded) << payload;
    EXPECT_EQ(encoded.error().code, ErrorCode::kInvalidArgument);
  }
}

}  // namespace
}  // namespace room_outbox
