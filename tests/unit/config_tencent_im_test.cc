// The [tencent_im] keys of the failure scopes and priorities: breaker_cooldown, msg_priority,
// [tencent_im.priority_by_type].
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "config/config.h"
#include "support/config_fixture.h"

namespace room_outbox::relay {
namespace {

using ::testing::HasSubstr;
using std::chrono::milliseconds;

class ConfigTencentImTest : public ::room_outbox::testing::ConfigFixture {};

TEST_F(ConfigTencentImTest, DefaultsAreHighPriorityAndAMinuteOfCooldown) {
  auto c = Load("");
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->tencent_im.msg_priority, MsgPriority::kHigh);
  EXPECT_TRUE(c->tencent_im.priority_by_type.empty());
  EXPECT_EQ(c->tencent_im.breaker_cooldown, milliseconds(60000));
}

TEST_F(ConfigTencentImTest, ReadsEveryKey) {
  auto c = Load(R"(
[tencent_im]
msg_priority = "Normal"
breaker_cooldown = "90s"
[tencent_im.priority_by_type]
RoomGiftSent = "High"
RoomHeatChanged = "Low"
"Room User Joined" = "Normal"
)");
  ASSERT_TRUE(c) << c.error().message;
  const TencentImOptions& t = c->tencent_im;
  EXPECT_EQ(t.msg_priority, MsgPriority::kNormal);
  EXPECT_EQ(t.breaker_cooldown, milliseconds(90000));
  EXPECT_EQ(t.priority_by_type.size(), 3u);
  EXPECT_EQ(t.priority_by_type.at("RoomGiftSent"), MsgPriority::kHigh);
  EXPECT_EQ(t.priority_by_type.at("RoomHeatChanged"), MsgPriority::kLow);
  EXPECT_EQ(t.priority_by_type.at("Room User Joined"), MsgPriority::kNormal);
}

TEST_F(ConfigTencentImTest, ANonPositiveCooldownFallsBackToTheDefault) {
  for (const char* value : {"0s", "-5s"}) {
    auto c = Load(std::string("[tencent_im]\nbreaker_cooldown = \"") + value + "\"\n");
    ASSERT_TRUE(c) << value << ": " << c.error().message;
    EXPECT_EQ(c->tencent_im.breaker_cooldown, milliseconds(60000)) << value;
  }
}

TEST_F(ConfigTencentImTest, BadValuesAreErrorsNamingTheKey) {
  struct Case {
    const char* toml;
    const char* key;
  };
  const Case cases[] = {
      {"[tencent_im]\nmsg_priority = \"high\"\n", "tencent_im.msg_priority"},
      {"[tencent_im]\nmsg_priority = \"Lowest\"\n", "tencent_im.msg_priority"},
      {"[tencent_im]\nmsg_priority = 1\n", "tencent_im.msg_priority"},
      {"[tencent_im]\nbreaker_cooldown = 60\n", "tencent_im.breaker_cooldown"},
      {"[tencent_im]\nbreaker_cooldown = \"soon\"\n", "tencent_im.breaker_cooldown"},
      {"[tencent_im.priority_by_type]\nRoomGiftSent = \"Urgent\"\n",
       "tencent_im.priority_by_type.RoomGiftSent"},
      {"[tencent_im.priority_by_type]\nRoomGiftSent = 3\n",
       "tencent_im.priority_by_type.RoomGiftSent"},
      {"[tencent_im]\npriority_by_type = \"High\"\n", "tencent_im.priority_by_type"},
      {"[tencent_im]\nmsg_prio = \"High\"\n", "tencent_im.msg_prio"},
  };
  for (const Case& c : cases) {
    const std::string error = ErrorOf(c.toml);
    EXPECT_THAT(error, HasSubstr(c.key)) << c.toml;
  }
  EXPECT_THAT(ErrorOf("[tencent_im.priority_by_type]\nRoomGiftSent = \"Urgent\"\n"),
              HasSubstr("\"High\", \"Normal\", \"Low\""));
}

TEST_F(ConfigTencentImTest, TheEffectiveConfigShowsTheKeysAndLoadsBack) {
  auto c = Load(R"(
[tencent_im]
msg_priority = "Low"
breaker_cooldown = "2m"
[tencent_im.priority_by_type]
RoomGiftSent = "High"
)");
  ASSERT_TRUE(c) << c.error().message;
  const std::string text = RenderEffectiveConfig(*c);
  EXPECT_THAT(text, HasSubstr("msg_priority = \"Low\""));
  EXPECT_THAT(text, HasSubstr("breaker_cooldown = \"2m\""));
  EXPECT_THAT(text, HasSubstr("[tencent_im.priority_by_type]\n\"RoomGiftSent\" = \"High\"\n"));
  auto back = Load(text, "rendered.toml");
  ASSERT_TRUE(back) << back.error().message << "\n" << text;
  EXPECT_EQ(back->tencent_im.msg_priority, MsgPriority::kLow);
  EXPECT_EQ(back->tencent_im.breaker_cooldown, milliseconds(120000));
  EXPECT_EQ(back->tencent_im.priority_by_type, c->tencent_im.priority_by_type);
}

}  // namespace
}  // namespace room_outbox::relay
