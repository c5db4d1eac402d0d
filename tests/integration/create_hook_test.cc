// CreateHook refusing what it cannot use: an unreachable database, plain HTTP to a remote host.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "room_outbox/hook.h"

namespace room_outbox::testing {
namespace {

using std::chrono::milliseconds;

TEST(CreateHookTest, FailsFastNamingTheProblemWhenTheDatabaseIsUnreachable) {
  HookOptions options;
  options.mysql.socket = "/nonexistent/room-outbox.sock";
  options.mysql.password = "s3cret-password";
  options.mysql.connect_timeout = milliseconds(500);
  options.tencent_im.endpoint = "http://127.0.0.1:9";
  options.tencent_im.sdk_app_id = 1400000000;
  options.tencent_im.secret_key = "k";
  Error error;

  auto hook = CreateHook(options, &error);

  EXPECT_EQ(hook, nullptr);
  EXPECT_EQ(error.code, ErrorCode::kUnavailable);
  EXPECT_NE(error.message.find("room-outbox.sock"), std::string::npos) << error.message;
  EXPECT_EQ(error.message.find("s3cret-password"), std::string::npos);
}

TEST(CreateHookTest, RefusesPlainHttpToANonLoopbackHost) {
  HookOptions options;
  options.tencent_im.endpoint = "http://console.tim.qq.com";
  options.tencent_im.sdk_app_id = 1400000000;
  options.tencent_im.secret_key = "k";
  Error error;

  auto hook = CreateHook(options, &error);

  EXPECT_EQ(hook, nullptr);
  EXPECT_EQ(error.code, ErrorCode::kInvalidArgument);
  EXPECT_NE(error.message.find("tencent_im.endpoint"), std::string::npos) << error.message;
}

}  // namespace
}  // namespace room_outbox::testing
