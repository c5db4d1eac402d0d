// SetOption (hook/src/c_api/option_setter.h): one relay.toml key set by name through the file's
// readers, behind room_outbox_options_set.
#include "c_api/option_setter.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

namespace room_outbox::c_api {
namespace {

TEST(OptionSetterTest, ATypedValueIsReadWithTheFilesRules) {
  core::SharedConfig config;
  ASSERT_TRUE(SetOption(config, "mysql.port", "3307"));
  EXPECT_EQ(config.mysql.port, 3307);
  ASSERT_TRUE(SetOption(config, "hook.sync_publish_timeout", "250ms"));
  EXPECT_EQ(config.hook.sync_publish_timeout.count(), 250);
  ASSERT_TRUE(SetOption(config, "tencent_im.skip_event_types", R"(["A", "B"])"));
  EXPECT_EQ(config.tencent_im.skip_event_types, (std::vector<std::string>{"A", "B"}));
  ASSERT_TRUE(SetOption(config, "tencent_im.priority_by_type.RoomGiftSent", "Low"));
  EXPECT_EQ(config.tencent_im.priority_by_type.at("RoomGiftSent"), MsgPriority::kLow);
  ASSERT_TRUE(SetOption(config, "outbox_worker.ordering", "none"));
  EXPECT_FALSE(config.per_room_order);
  ASSERT_TRUE(SetOption(config, "node_id", "node-7"));
  EXPECT_EQ(config.node_id, "node-7");
}

TEST(OptionSetterTest, AValueThatIsTomlOfAnotherTypeIsTakenAsTheString) {
  core::SharedConfig config;
  ASSERT_TRUE(SetOption(config, "mysql.user", "123"));
  EXPECT_EQ(config.mysql.user, "123");
  ASSERT_TRUE(SetOption(config, "mysql.host", "127.0.0.1"));
  EXPECT_EQ(config.mysql.host, "127.0.0.1");
}

TEST(OptionSetterTest, ABadValueOrKeyFailsNamingItAndChangesNothing) {
  core::SharedConfig config;
  const struct {
    const char* key;
    const char* value;
    const char* message;
  } cases[] = {
      {"mysql.port", "0", "options: mysql.port: must be 1..65535, got 0"},
      {"mysql.port", "many", "options: mysql.port: expected an integer"},
      {"mysql.prot", "1", "options: unknown key 'mysql.prot'"},
      {"hook.sync_publish", "sometimes", "options: hook.sync_publish: unknown value"},
      {"log.level", "debug", "options: unknown key 'log'"},
      {"outbox_worker.poll_interval", "1s", "unknown key 'outbox_worker.poll_interval'"},
      {"mysql.", "x", "is not a key"},
      {"mysql.port", "1\nother = 2", "mysql.port: expected an integer"},
  };
  for (const auto& c : cases) {
    auto set = SetOption(config, c.key, c.value);
    ASSERT_FALSE(set) << c.key;
    EXPECT_EQ(set.error().code, ErrorCode::kInvalidArgument) << c.key;
    EXPECT_NE(set.error().message.find(c.message), std::string::npos)
        << c.key << ": " << set.error().message;
  }
  EXPECT_EQ(config.mysql.port, MysqlOptions{}.port);
}

TEST(OptionSetterTest, SecretsComeFromMemoryOrFromTheirFileAndNeverReachAnError) {
  core::SharedConfig config;
  ASSERT_TRUE(SetOption(config, "mysql.password", "s3cret"));
  EXPECT_EQ(config.mysql.password, "s3cret");
  ASSERT_TRUE(SetOption(config, "tencent_im.secret_key", "k3y"));
  EXPECT_EQ(config.tencent_im.secret_key, "k3y");
  const std::string file = ::testing::TempDir() + "option_setter_key";
  std::ofstream(file) << "from-file\n";
  ASSERT_TRUE(SetOption(config, "tencent_im.secret_key_file", file));
  EXPECT_EQ(config.tencent_im.secret_key, "from-file");
  EXPECT_EQ(config.mysql.password, "s3cret");  // the other secret is untouched
  auto missing = SetOption(config, "mysql.password_file", file + ".missing");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("mysql.password_file"), std::string::npos);
  EXPECT_EQ(missing.error().message.find("s3cret"), std::string::npos);
  std::remove(file.c_str());
}

}  // namespace
}  // namespace room_outbox::c_api
