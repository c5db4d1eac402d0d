// The [tencent_im] keys of the failure scopes and priorities: breaker_cooldown, msg_priority,
// [tencent_im.priority_by_type]; and [tencent_im.max_age_by_type], read by the relay and
// accepted by the hook's loader.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "config/config.h"
#include "room_outbox/hook.h"
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

TEST_F(ConfigTencentImTest, MaxAgeByTypeIsEmptyByDefault) {
  auto c = Load("");
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_TRUE(c->max_age_by_type.empty());
  EXPECT_THAT(RenderEffectiveConfig(*c),
              HasSubstr("[tencent_im.max_age_by_type]\n# empty: no expiry"));
}

TEST_F(ConfigTencentImTest, MaxAgeByTypeReadsADurationPerType) {
  auto c = Load(R"(
[tencent_im.max_age_by_type]
RoomGiftSent = "60s"
"Room Like" = "1500ms"
RoomKick = "2m"
)");
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->max_age_by_type.size(), 3u);
  EXPECT_EQ(c->max_age_by_type.at("RoomGiftSent"), milliseconds(60000));
  EXPECT_EQ(c->max_age_by_type.at("Room Like"), milliseconds(1500));
  EXPECT_EQ(c->max_age_by_type.at("RoomKick"), milliseconds(120000));
}

TEST_F(ConfigTencentImTest, MaxAgeByTypeRefusesEveryValueButAPositiveDuration) {
  struct Case {
    const char* toml;
    const char* why;
  };
  const Case cases[] = {
      {"RoomGiftSent = 60\n", "expected a duration string"},
      {"RoomGiftSent = true\n", "expected a duration string"},
      {"RoomGiftSent = \"soon\"\n", "soon"},
      {"RoomGiftSent = \"1.5s\"\n", "1.5s"},
      {"RoomGiftSent = \"0s\"\n", "must be a duration > 0"},
      {"RoomGiftSent = \"0\"\n", "must be a duration > 0"},
      {"RoomGiftSent = \"-5s\"\n", "must be a duration > 0"},
  };
  for (const Case& c : cases) {
    const std::string error = ErrorOf(std::string("[tencent_im.max_age_by_type]\n") + c.toml);
    EXPECT_THAT(error, HasSubstr("tencent_im.max_age_by_type.RoomGiftSent")) << c.toml;
    EXPECT_THAT(error, HasSubstr(c.why)) << c.toml;
  }
  EXPECT_THAT(ErrorOf("[tencent_im.max_age_by_type]\n\"\" = \"60s\"\n"),
              HasSubstr("an event type must not be empty"));
  EXPECT_THAT(ErrorOf("[tencent_im]\nmax_age_by_type = \"60s\"\n"),
              HasSubstr("tencent_im.max_age_by_type"));
}

TEST_F(ConfigTencentImTest, MaxAgeByTypeIsRenderedAndLoadsBack) {
  auto c = Load("[tencent_im.max_age_by_type]\nRoomGiftSent = \"60000ms\"\n");
  ASSERT_TRUE(c) << c.error().message;
  const std::string text = RenderEffectiveConfig(*c);
  EXPECT_THAT(text, HasSubstr("[tencent_im.max_age_by_type]\n\"RoomGiftSent\" = \"1m\"\n"));
  auto back = Load(text, "rendered.toml");
  ASSERT_TRUE(back) << back.error().message << "\n" << text;
  EXPECT_EQ(back->max_age_by_type, c->max_age_by_type);
}

TEST_F(ConfigTencentImTest, TheHooksLoaderAcceptsAndChecksMaxAgeByType) {
  Error error;
  const std::string good =
      Write("hook.toml", "[tencent_im.max_age_by_type]\nRoomGiftSent = \"60s\"\n");
  EXPECT_TRUE(LoadHookOptions(good, &error).has_value()) << error.message;
  const std::string bad =
      Write("bad.toml", "[tencent_im.max_age_by_type]\nRoomGiftSent = \"0s\"\n");
  EXPECT_FALSE(LoadHookOptions(bad, &error).has_value());
  EXPECT_THAT(error.message, HasSubstr("tencent_im.max_age_by_type.RoomGiftSent"));
}

// [tencent_im] proxy: none by default; a proxy URL is read by the relay and by the hook's loader,
// shown by --check-config, and anything but scheme://host:port is refused without echoing it.
TEST_F(ConfigTencentImTest, ProxyIsNoneByDefaultAndOnlyAProxyUrlIsAccepted) {
  auto none = Load("");
  ASSERT_TRUE(none) << none.error().message;
  EXPECT_EQ(none->tencent_im.proxy, "");
  EXPECT_THAT(RenderEffectiveConfig(*none), HasSubstr("proxy = \"\"\n"));
  for (const char* url : {"http://proxy.internal:3128", "https://10.0.0.1:8443",
                          "socks5h://[::1]:1080", "socks4a://p:1080/"}) {
    auto c = Load(std::string("[tencent_im]\nproxy = \"") + url + "\"\n");
    ASSERT_TRUE(c) << url << ": " << c.error().message;
    EXPECT_EQ(c->tencent_im.proxy, url);
    auto back = Load(RenderEffectiveConfig(*c), "rendered.toml");
    ASSERT_TRUE(back) << back.error().message;
    EXPECT_EQ(back->tencent_im.proxy, url);
    Error error;
    auto hook = LoadHookOptions(
        Write("hook.toml", std::string("[tencent_im]\nproxy = \"") + url + "\"\n"), &error);
    ASSERT_TRUE(hook.has_value()) << error.message;
    EXPECT_EQ(hook->tencent_im.proxy, url);
  }
  struct Case {
    const char* value;
    const char* why;
  };
  const Case bad[] = {
      {"http://user:s3cret@proxy:3128", "must not carry a user or password"},
      {"ftp://proxy:21", "scheme must be"},
      {"proxy:3128", "scheme"},
      {"http://proxy:3128/path", "without a path"},
      {"http://proxy:3128?x=1", "without a path"},
      {"http://", "not a proxy URL"},
  };
  for (const Case& c : bad) {
    const std::string error = ErrorOf(std::string("[tencent_im]\nproxy = \"") + c.value + "\"\n");
    EXPECT_THAT(error, HasSubstr("tencent_im.proxy: ")) << c.value;
    EXPECT_THAT(error, HasSubstr(c.why)) << c.value;
    EXPECT_THAT(error, ::testing::Not(HasSubstr("s3cret"))) << c.value;
  }
  Error error;
  EXPECT_FALSE(LoadHookOptions(Write("bad.toml", "[tencent_im]\nproxy = \"ftp://p:1\"\n"), &error)
                   .has_value());
  EXPECT_THAT(error.message, HasSubstr("tencent_im.proxy"));
}

}  // namespace
}  // namespace room_outbox::relay
