// The IM app's credentials (tencent_im.sdk_app_id, admin_identifier, the secret key) are needed
// only by what sends: the publisher refuses to be built without them unless its caller never
// sends (a hook with sync_publish = "off"), and then signs nothing; LoadHookOptions reads a
// config without them. CreateHook's side (a database is needed) is in
// tests/integration/create_hook_test.cc, the C ABI's in tests/c_abi/c_abi_test.c.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "core/tencent/tencent_im_publisher.h"
#include "fake_clock.h"
#include "room_outbox/hook.h"
#include "support/config_fixture.h"

namespace room_outbox::core {
namespace {

using ::testing::HasSubstr;

// Options that are valid but for the credentials; nothing listens on the endpoint.
TencentImOptions WithoutCredentials() {
  TencentImOptions options;
  options.endpoint = "http://127.0.0.1:9";
  options.sdk_app_id = 0;
  options.admin_identifier.clear();
  options.secret_key.clear();
  options.skip_event_types = {"RoomHeatChanged"};
  options.requests_per_second = 0;  // no budget: nothing waits on the fake clock
  return options;
}

TEST(ImCredentialsTest, APublisherThatSendsIsRefusedNamingEachMissingKey) {
  ::room_outbox::testing::FakeClock clock;
  TencentImOptions options = WithoutCredentials();
  auto made = MakeTencentImPublisher(options, clock);
  ASSERT_FALSE(made);
  EXPECT_EQ(made.error().code, ErrorCode::kInvalidArgument);
  EXPECT_THAT(made.error().message, HasSubstr("tencent_im.sdk_app_id"));

  options.sdk_app_id = 1400012345;
  made = MakeTencentImPublisher(options, clock, ImCredentials::kRequired);
  ASSERT_FALSE(made);
  EXPECT_THAT(made.error().message, HasSubstr("tencent_im.admin_identifier"));

  options.admin_identifier = "administrator";
  made = MakeTencentImPublisher(options, clock, ImCredentials::kRequired);
  ASSERT_FALSE(made);
  EXPECT_THAT(made.error().message, HasSubstr("tencent_im.secret_key"));

  options.secret_key = "k";
  EXPECT_TRUE(MakeTencentImPublisher(options, clock, ImCredentials::kRequired));
}

TEST(ImCredentialsTest, APublisherWhoseCallerNeverSendsIsBuiltWithoutThemAndSignsNothing) {
  ::room_outbox::testing::FakeClock clock;
  auto made = MakeTencentImPublisher(WithoutCredentials(), clock, ImCredentials::kNotUsed);
  ASSERT_TRUE(made) << made.error().message;
  Publisher& publisher = **made;
  EXPECT_FALSE(publisher.Sends("RoomHeatChanged"));
  EXPECT_TRUE(publisher.Sends("RoomGiftSent"));

  PublishMessage message;
  message.row_id = 1;
  message.envelope =
      Envelope{"evt-1", "RoomGiftSent", "room-1", 1, "cmd-1", "req-1", "node", 1, "{}"};
  const PublishOutcome outcome = publisher.Publish(message, std::chrono::milliseconds(500));
  EXPECT_FALSE(outcome.delivered());
  EXPECT_EQ(outcome.http_status, 0);  // no request was made
  EXPECT_THAT(outcome.error, HasSubstr("tencent_im.sdk_app_id"));
}

TEST(ImCredentialsTest, OtherOptionsAreCheckedWhenTheCredentialsAreNot) {
  ::room_outbox::testing::FakeClock clock;
  TencentImOptions options = WithoutCredentials();
  options.requests_per_second = -1;
  auto made = MakeTencentImPublisher(options, clock, ImCredentials::kNotUsed);
  ASSERT_FALSE(made);
  EXPECT_THAT(made.error().message, HasSubstr("tencent_im.requests_per_second"));
}

class HookConfigCredentialsTest : public ::room_outbox::testing::ConfigFixture {};

TEST_F(HookConfigCredentialsTest, LoadHookOptionsReadsAConfigWithoutTheImCredentials) {
  const std::string path =
      Write("relay.toml",
            "[mysql]\nsocket = \"/run/mysqld/mysqld.sock\"\n[hook]\nsync_publish = \"off\"\n");
  Error error;
  auto options = LoadHookOptions(path, &error);
  ASSERT_TRUE(options) << error.message;
  EXPECT_EQ(options->sync_publish, SyncPublishMode::kOff);
  EXPECT_EQ(options->tencent_im.sdk_app_id, 0u);
  EXPECT_TRUE(options->tencent_im.secret_key.empty());
}

}  // namespace
}  // namespace room_outbox::core
