// [wake] socket: off by default, an absolute path that fits a unix socket address, errors with
// file:line:col naming the key, and shown by --check-config's effective config.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/un.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "config.h"

namespace room_outbox::relay {
namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;

class ConfigWakeTest : public ::testing::Test {
 protected:
  ConfigWakeTest() {
    char tmpl[] = "/tmp/relay-config-wake-test-XXXXXX";
    dir_ = mkdtemp(tmpl);
  }
  ~ConfigWakeTest() override { std::filesystem::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& content) {
    const std::filesystem::path p = dir_ / name;
    std::ofstream(p) << content;
    return p.string();
  }
  Result<Config> Load(const std::string& content) {
    return LoadConfig(Write("relay.toml", content));
  }
  std::string ErrorOf(const std::string& content) {
    auto c = Load(content);
    EXPECT_FALSE(c) << "accepted:\n" << content;
    return c ? std::string() : c.error().message;
  }

  std::filesystem::path dir_;
};

TEST_F(ConfigWakeTest, OffByDefault) {
  auto c = Load("");
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->wake_socket, "");
  auto empty = Load("[wake]\nsocket = \"\"\n");
  ASSERT_TRUE(empty) << empty.error().message;
  EXPECT_EQ(empty->wake_socket, "");
}

TEST_F(ConfigWakeTest, AnAbsolutePathIsTaken) {
  auto c = Load("[wake]\nsocket = \"/run/outbox-relay/wake.sock\"\n");
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->wake_socket, "/run/outbox-relay/wake.sock");
}

TEST_F(ConfigWakeTest, PathsNoUnixSocketCanHaveAreErrorsNamingTheKeyAndPosition) {
  const std::string relative = ErrorOf("[wake]\nsocket = \"run/wake.sock\"\n");
  EXPECT_THAT(relative, MatchesRegex(".*relay\\.toml:2:10: wake\\.socket: .*must be absolute.*"))
      << relative;
  const std::string too_long = "/run/" + std::string(sizeof(sockaddr_un{}.sun_path), 'w');
  const std::string long_error = ErrorOf("[wake]\nsocket = \"" + too_long + "\"\n");
  EXPECT_THAT(long_error, HasSubstr("relay.toml:2:10: wake.socket: "));
  EXPECT_THAT(long_error, HasSubstr("at most 107"));
  EXPECT_THAT(ErrorOf("[wake]\nsocket = 7\n"), HasSubstr("wake.socket: expected a string"));
  EXPECT_THAT(ErrorOf("[wake]\nsockets = \"/run/x.sock\"\n"),
              HasSubstr("unknown key 'wake.sockets'"));
  EXPECT_THAT(ErrorOf("wake = \"/run/x.sock\"\n"), HasSubstr("wake: expected a table"));
}

TEST_F(ConfigWakeTest, TheEffectiveConfigShowsTheSocketAndLoadsAgain) {
  auto c = Load("[wake]\nsocket = \"/run/outbox-relay/wake.sock\"\n");
  ASSERT_TRUE(c) << c.error().message;
  const std::string text = RenderEffectiveConfig(*c);
  EXPECT_THAT(text, HasSubstr("[wake]\nsocket = \"/run/outbox-relay/wake.sock\"\n"));
  auto back = LoadConfig(Write("rendered.toml", text));
  ASSERT_TRUE(back) << back.error().message << "\n" << text;
  EXPECT_EQ(back->wake_socket, "/run/outbox-relay/wake.sock");

  auto off = Load("");
  ASSERT_TRUE(off);
  EXPECT_THAT(RenderEffectiveConfig(*off), HasSubstr("[wake]\nsocket = \"\"\n"));
}

}  // namespace
}  // namespace room_outbox::relay
