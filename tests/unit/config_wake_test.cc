// [wake] socket: off by default, an absolute path that fits a unix socket address, errors with
// file:line:col naming the key, and shown by --check-config's effective config.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "config/config.h"
#include "support/config_fixture.h"

namespace room_outbox::relay {
namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;

class ConfigWakeTest : public ::room_outbox::testing::ConfigFixture {};

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

TEST_F(ConfigWakeTest, MinIntervalAndSocketModeHaveDefaultsLimitsAndAreShown) {
  auto c = Load("");
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->wake.min_interval, kDefaultWakeMinInterval);
  EXPECT_EQ(c->wake.socket_mode, 0660u);

  auto set = Load(
      "[wake]\nsocket = \"/run/outbox-relay/wake.sock\"\nmin_interval = \"25ms\"\n"
      "socket_mode = \"0660\"\n");
  ASSERT_TRUE(set) << set.error().message;
  EXPECT_EQ(set->wake.min_interval, std::chrono::milliseconds(25));
  EXPECT_EQ(set->wake.socket_mode, 0660u);
  const std::string text = RenderEffectiveConfig(*set);
  EXPECT_THAT(text, HasSubstr("min_interval = \"25ms\"\nsocket_mode = \"0660\"\n"));
  EXPECT_THAT(text, HasSubstr("the socket file gets mode 0660: the relay's user and the file's "
                              "group may wake the relay"));
  auto back = LoadConfig(Write("rendered.toml", text));
  ASSERT_TRUE(back) << back.error().message << "\n" << text;
  EXPECT_EQ(back->wake.socket_mode, 0660u);
  EXPECT_THAT(RenderEffectiveConfig(*Load("[wake]\nsocket = \"/run/w.sock\"\n")),
              HasSubstr("the socket file gets mode 0660: the relay's user and the file's group"));
  EXPECT_THAT(
      RenderEffectiveConfig(*Load("[wake]\nsocket = \"/run/w.sock\"\nsocket_mode = \"0666\"\n")),
      HasSubstr("the socket file gets mode 0666: any local user may wake the relay"));

  EXPECT_THAT(ErrorOf("[wake]\nsocket_mode = \"0999\"\n"),
              HasSubstr("wake.socket_mode: \"0999\" is not an octal file mode"));
  EXPECT_THAT(ErrorOf("[wake]\nsocket_mode = \"01777\"\n"), HasSubstr("wake.socket_mode: "));
  EXPECT_THAT(ErrorOf("[outbox_worker]\npoll_interval = \"1s\"\n[wake]\nmin_interval = \"2s\"\n"),
              HasSubstr("wake.min_interval: 2s must not exceed [outbox_worker] poll_interval"));
  auto zero = Load("[wake]\nmin_interval = \"0ms\"\n");  // as every duration: <= 0 is the default
  ASSERT_TRUE(zero) << zero.error().message;
  EXPECT_EQ(zero->wake.min_interval, kDefaultWakeMinInterval);
}

// Each shipped config documents the key with a commented example that loads once uncommented,
// and the systemd unit creates the directory the production example names.
TEST_F(ConfigWakeTest, TheShippedExamplesLoadUncommentedAndTheUnitMakesTheirDirectory) {
  Write("mysql-password", "pw");
  Write("tim-secret-key", "key");
  setenv("CREDENTIALS_DIRECTORY", dir_.c_str(), 1);
  const std::filesystem::path source(ROOM_OUTBOX_SOURCE_DIR);
  for (const char* name : {"relay.toml", "relay.docker.toml", "relay.tencent.example.toml"}) {
    std::ifstream in(source / "conf" / name);
    std::ostringstream text;
    text << in.rdbuf();
    std::string config = text.str();
    const size_t example = config.find("\n# socket = \"");
    ASSERT_NE(example, std::string::npos) << name << " has no commented [wake] socket example";
    EXPECT_LT(config.find("\n[wake]\n"), example) << name;
    config.erase(example + 1, 2);
    auto c = LoadConfig(Write(name, config));
    ASSERT_TRUE(c) << name << ": " << c.error().message;
    EXPECT_FALSE(c->wake_socket.empty()) << name;
    if (std::string(name) == "relay.tencent.example.toml") {
      EXPECT_EQ(c->wake_socket, "/run/outbox-relay/wake.sock");
    }
  }
  unsetenv("CREDENTIALS_DIRECTORY");
  std::ifstream unit(source / "systemd" / "outbox-relay.service");
  std::ostringstream unit_text;
  unit_text << unit.rdbuf();
  EXPECT_THAT(unit_text.str(), HasSubstr("\nRuntimeDirectory=outbox-relay\n"));
  EXPECT_THAT(unit_text.str(), HasSubstr("\nRuntimeDirectoryMode=0750\n"));
}

}  // namespace
}  // namespace room_outbox::relay
