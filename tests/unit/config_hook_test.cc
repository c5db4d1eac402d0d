// [hook] sync_publish = "inline" | "background" | "off", and [wake] socket.
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

class ConfigHookTest : public ::room_outbox::testing::ConfigFixture {};

TEST_F(ConfigHookTest, SyncPublishDefaultsToInline) {
  auto c = Load("");
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->hook.sync_publish, SyncPublishMode::kInline);
  EXPECT_EQ(c->wake_socket, "");
}

TEST_F(ConfigHookTest, SyncPublishReadsEachMode) {
  for (auto [text, mode] : {std::pair{"inline", SyncPublishMode::kInline},
                            std::pair{"background", SyncPublishMode::kBackground},
                            std::pair{"off", SyncPublishMode::kOff}}) {
    auto c = Load(std::string("[hook]\nsync_publish = \"") + text + "\"\n");
    ASSERT_TRUE(c) << c.error().message;
    EXPECT_EQ(c->hook.sync_publish, mode) << text;
    EXPECT_THAT(RenderEffectiveConfig(*c),
                HasSubstr(std::string("sync_publish = \"") + text + "\""));
  }
}

TEST_F(ConfigHookTest, UnknownSyncPublishValueNamesTheKeyTheValuesAndThePosition) {
  const std::string error =
      ErrorOf("[hook]\nsync_publish_timeout = \"300ms\"\nsync_publish = \"Background\"\n");
  EXPECT_THAT(error, HasSubstr("relay.toml:3:16: hook.sync_publish: unknown value \"Background\""));
  EXPECT_THAT(error, HasSubstr("(accepted: \"inline\", \"background\", \"off\")"));
  EXPECT_THAT(ErrorOf("[hook]\nsync_publish = true\n"),
              HasSubstr("hook.sync_publish: expected a string"));
}

TEST_F(ConfigHookTest, RenderedConfigWithSyncPublishLoadsBack) {
  auto c =
      Load("[hook]\nsync_publish = \"off\"\n[wake]\nsocket = \"/run/room-outbox/wake.sock\"\n");
  ASSERT_TRUE(c) << c.error().message;
  auto again = Load(RenderEffectiveConfig(*c));
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_EQ(again->hook.sync_publish, SyncPublishMode::kOff);
  EXPECT_EQ(again->wake_socket, "/run/room-outbox/wake.sock");
}

TEST_F(ConfigHookTest, WakeSocketMustBeAnAbsolutePathThatFitsASocketAddress) {
  EXPECT_THAT(ErrorOf("[wake]\nsocket = \"wake.sock\"\n"),
              HasSubstr("wake.socket: wake socket path must be absolute"));
  EXPECT_THAT(ErrorOf("[wake]\nsocket = \"/" + std::string(200, 'a') + "\"\n"),
              HasSubstr("wake.socket: wake socket path is 201 bytes"));
}

TEST(SyncPublishModeTest, NamesParseBackAndNothingElseParses) {
  for (SyncPublishMode mode :
       {SyncPublishMode::kInline, SyncPublishMode::kBackground, SyncPublishMode::kOff}) {
    EXPECT_EQ(ParseSyncPublishMode(SyncPublishModeName(mode)), mode);
  }
  EXPECT_EQ(ParseSyncPublishMode("Inline"), std::nullopt);
  EXPECT_EQ(ParseSyncPublishMode(""), std::nullopt);
  EXPECT_EQ(ParseSyncPublishMode("on"), std::nullopt);
}

}  // namespace
}  // namespace room_outbox::relay
