// Limits on hostile input (core/input_limits.h) at each entry point: envelopes, IM answers,
// config and secret files, text log lines.
#include "core/input_limits.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "config/config.h"
#include "core/envelope_codec.h"
#include "core/tencent/im_response.h"
#include "telemetry/log_line.h"

namespace room_outbox {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string Nested(size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); }

// A valid envelope whose payload is {"x": <value>}.
std::string EnvelopeWithPayloadValue(const std::string& value) {
  return R"({"event_id":"e","event_type":"RoomGiftSent","room_id":"r","room_seq":1,)"
         R"("command_id":"c","request_id":"q","node_id":"n","occurred_at_ms":1,"payload":{"x":)" +
         value + "}}";
}

TEST(InputLimitsTest, JsonNestingDepthCountsBracketsOutsideStrings) {
  EXPECT_EQ(core::JsonNestingDepth("", 10), 0u);
  EXPECT_EQ(core::JsonNestingDepth("{}", 10), 1u);
  EXPECT_EQ(core::JsonNestingDepth(R"({"a":[{"b":[]}],"c":{}})", 10), 4u);
  EXPECT_EQ(core::JsonNestingDepth(R"({"a":"[[[[{{{{\"[[[["})", 10), 1u);
  EXPECT_EQ(core::JsonNestingDepth(Nested(1000), 10), 11u) << "stops once past the limit";
  EXPECT_EQ(core::JsonNestingDepth("]]]][", 10), 1u) << "unbalanced input does not underflow";
}

TEST(InputLimitsTest, CheckJsonLimitsNamesTheLimit) {
  EXPECT_TRUE(core::CheckJsonLimits("x", Nested(64), 1000).ok());
  Status deep = core::CheckJsonLimits("x", Nested(65), 1000);
  ASSERT_FALSE(deep.ok());
  EXPECT_EQ(deep.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(deep.error().message, "x: nested deeper than 64 levels");
  Status big = core::CheckJsonLimits("x", std::string(1001, ' '), 1000);
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.error().message, "x: 1001 bytes, more than the limit of 1000");
}

TEST(InputLimitsTest, DecodeEnvelopeRefusesDeepNestingAndHugeInput) {
  // The envelope object is level 1, payload 2, so the payload's value may take 62 more.
  ASSERT_TRUE(core::DecodeEnvelope(EnvelopeWithPayloadValue(Nested(62))));
  auto deep = core::DecodeEnvelope(EnvelopeWithPayloadValue(Nested(63)));
  ASSERT_FALSE(deep);
  EXPECT_EQ(deep.error().message, "envelope: nested deeper than 64 levels");
  // Deep enough to overflow the stack of a recursive dump() if it got that far.
  auto very_deep = core::DecodeEnvelope(EnvelopeWithPayloadValue(Nested(1'000'000)));
  ASSERT_FALSE(very_deep);
  EXPECT_THAT(very_deep.error().message, HasSubstr("more than the limit of 65536"));
  auto huge = core::DecodeEnvelope(EnvelopeWithPayloadValue('"' + std::string(70'000, 'a') + '"'));
  ASSERT_FALSE(huge);
  EXPECT_THAT(huge.error().message, HasSubstr("bytes, more than the limit of 65536"));
}

TEST(InputLimitsTest, EncodeEnvelopeRefusesWhatDecodeWouldRefuse) {
  Envelope e;
  e.event_id = "e";
  e.event_type = "RoomGiftSent";
  e.room_id = "r";
  e.payload = R"({"x":)" + Nested(62) + "}";
  auto ok = core::EncodeEnvelope(e);
  ASSERT_TRUE(ok) << ok.error().message;
  EXPECT_TRUE(core::DecodeEnvelope(*ok));
  e.payload = R"({"x":)" + Nested(63) + "}";
  auto deep = core::EncodeEnvelope(e);
  ASSERT_FALSE(deep);
  EXPECT_THAT(deep.error().message, HasSubstr("nested deeper than 63 levels"));
  e.payload = R"({"x":")" + std::string(core::kMaxEnvelopeBytes - 10, 'a') + R"("})";
  auto huge = core::EncodeEnvelope(e);
  ASSERT_FALSE(huge) << "the payload fits, the envelope around it does not";
  EXPECT_THAT(huge.error().message, HasSubstr("more than the limit of 65536"));
}

TEST(InputLimitsTest, ImResponseOverTheLimitsIsRetryableWithAShortError) {
  const std::string deep = R"({"ActionStatus":"OK","ErrorCode":0,"x":)" + Nested(100) + "}";
  core::PublishOutcome d = core::ClassifyImResponse(200, deep);
  EXPECT_EQ(d.status, core::PublishStatus::kRetryable);
  EXPECT_EQ(d.error, "invalid IM response: nested deeper than 64 levels");
  EXPECT_EQ(d.http_status, 200);
  const std::string big = R"({"ActionStatus":"OK","ErrorCode":0,"x":")" +
                          std::string(core::kMaxImResponseBytes, 'a') + R"("})";
  core::PublishOutcome b = core::ClassifyImResponse(200, big);
  EXPECT_EQ(b.status, core::PublishStatus::kRetryable);
  EXPECT_THAT(b.error, HasSubstr("more than the limit of 65536"));
  EXPECT_LT(b.error.size(), 100u);
}

TEST(InputLimitsTest, ReadBoundedStopsAtTheLimit) {
  std::istringstream small(std::string(10, 'a'));
  auto ok = core::ReadBounded(small, 10, "f");
  ASSERT_TRUE(ok);
  EXPECT_EQ(*ok, std::string(10, 'a'));
  std::istringstream big(std::string(20'000, 'a'));
  auto refused = core::ReadBounded(big, 10'000, "f");
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().message, "f is larger than 10000 bytes");
}

TEST(InputLimitsTest, SecretContentAllowsOneTrailingNewlineOnly) {
  EXPECT_EQ(core::CheckSecretContent("s", "key").value(), "key");
  EXPECT_EQ(core::CheckSecretContent("s", "key\n").value(), "key");
  EXPECT_EQ(core::CheckSecretContent("s", "key\r\n").value(), "key");
  EXPECT_EQ(core::CheckSecretContent("s", "pass word").value(), "pass word");
  EXPECT_EQ(core::CheckSecretContent("s", "").value(), "");
  for (const std::string& bad :
       {std::string("key\n\n"), std::string("key\nother\n"), std::string("ke\0y", 4),
        std::string("key\r"), std::string("\tkey"), std::string("key\x7f")}) {
    auto r = core::CheckSecretContent("s", bad);
    ASSERT_FALSE(r) << "accepted a secret with a control byte";
    EXPECT_THAT(r.error().message, HasSubstr("s holds a control byte at offset"));
    EXPECT_THAT(r.error().message, Not(HasSubstr("key"))) << "the content never appears";
  }
  EXPECT_THAT(core::CheckSecretContent("s", std::string("ke\0y", 4)).error().message,
              HasSubstr("(a NUL)"));
  EXPECT_THAT(
      core::CheckSecretContent("s", std::string(core::kMaxSecretBytes + 1, 'k')).error().message,
      HasSubstr("s is larger than 4096 bytes"));
}

class InputLimitsConfigTest : public ::testing::Test {
 protected:
  InputLimitsConfigTest() {
    char tmpl[] = "/tmp/input-limits-test-XXXXXX";
    dir_ = mkdtemp(tmpl);
    unsetenv("ROOM_OUTBOX_MYSQL_PASSWORD");
    unsetenv("ROOM_OUTBOX_TIM_SECRET_KEY");
    unsetenv("CREDENTIALS_DIRECTORY");
  }
  ~InputLimitsConfigTest() override { std::filesystem::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& content) {
    const std::filesystem::path p = dir_ / name;
    std::ofstream(p, std::ios::binary) << content;
    return p.string();
  }
  std::string ErrorOf(const std::string& config) {
    auto c = relay::LoadConfig(Write("relay.toml", config));
    EXPECT_FALSE(c);
    return c ? std::string() : c.error().message;
  }

  std::filesystem::path dir_;
};

TEST_F(InputLimitsConfigTest, ConfigFileLargerThanTheLimitIsRefused) {
  const std::string path =
      Write("relay.toml", "# " + std::string(core::kMaxConfigBytes, 'x') + "\n");
  auto c = relay::LoadConfig(path);
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().message, "config \"" + path + "\" is larger than 1048576 bytes");
}

TEST_F(InputLimitsConfigTest, EndlessSecretFileIsRefusedNotRead) {
  EXPECT_EQ(ErrorOf("[mysql]\npassword_file = \"/dev/zero\"\n"),
            "mysql.password_file: \"/dev/zero\" is a device, not a regular file; refused");
  const std::string big = Write("big-pw", std::string(core::kMaxSecretBytes + 10, 'x'));
  EXPECT_EQ(ErrorOf("[mysql]\npassword_file = \"big-pw\"\n"),
            "mysql.password_file: \"" + big + "\" is larger than 4096 bytes");
}

TEST_F(InputLimitsConfigTest, SecretFileWithGarbageIsRefusedWithoutItsContent) {
  Write("key", "s3cret\nleftover");
  const std::string e = ErrorOf("[tencent_im]\nsecret_key_file = \"key\"\n");
  EXPECT_THAT(e, HasSubstr("tencent_im.secret_key_file: \""));
  EXPECT_THAT(e, HasSubstr("holds a control byte at offset 6 (more than one line)"));
  EXPECT_THAT(e, Not(HasSubstr("s3cret")));
  Write("pw", std::string("pa\0ss\n", 6));
  EXPECT_THAT(ErrorOf("[mysql]\npassword_file = \"pw\"\n"), HasSubstr("offset 2 (a NUL)"));
}

TEST_F(InputLimitsConfigTest, SecretFileWithOneNewlineStillLoads) {
  Write("pw", "pass word\r\n");
  auto c = relay::LoadConfig(Write("relay.toml", "[mysql]\npassword_file = \"pw\"\n"));
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->mysql.password, "pass word");
}

TEST(InputLimitsLogTest, TextLinesEscapeEveryControlByte) {
  relay::LogLine line("row failed");
  line.Add("error", std::string("a\x1b[31mred\x00\x7f\nb", 13));
  EXPECT_EQ(line.Render(relay::LogFormat::kText), R"(row failed error="a\x1b[31mred\x00\x7f\nb")");
}

}  // namespace
}  // namespace room_outbox
