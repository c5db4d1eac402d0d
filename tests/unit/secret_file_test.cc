// Secret files as the loaders open them (core/config/secret_file.h, secrets.h): real files,
// links, a FIFO and a directory in a private temporary directory.
#include "core/config/secret_file.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <future>
#include <string>
#include <vector>

#include "core/config/secrets.h"
#include "core/mysql/connect_options.h"
#include "core/wipe.h"
#include "room_outbox/hook.h"
#include "support/config_fixture.h"

namespace room_outbox::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
namespace fs = std::filesystem;

class SecretFileTest : public ConfigFixture {
 protected:
  std::string Secret(const std::string& name, const std::string& content, mode_t mode) {
    const std::string path = Write(name, content);
    EXPECT_EQ(::chmod(path.c_str(), mode), 0);
    return path;
  }
};

TEST_F(SecretFileTest, AnOwnerOnlyFileIsReadWithoutWarning) {
  const std::string path = Secret("key", "k3y\n", 0600);
  auto read = core::ReadSecretFile("tencent_im.secret_key_file", path);
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_EQ(read->content, "k3y");
  EXPECT_EQ(read->warning, "");
}

TEST_F(SecretFileTest, AGroupOrWorldReadableFileIsReadWithAWarningNamingKeyAndPath) {
  for (mode_t mode : {0640, 0604}) {
    const std::string path = Secret("key", "k3y", mode);
    auto read = core::ReadSecretFile("mysql.password_file", path);
    ASSERT_TRUE(read) << read.error().message;
    EXPECT_EQ(read->content, "k3y");
    EXPECT_THAT(read->warning, HasSubstr("mysql.password_file: \"" + path + "\""));
    EXPECT_THAT(read->warning, HasSubstr("readable by its group or other users"));
    EXPECT_THAT(read->warning, Not(HasSubstr("k3y")));
  }
}

TEST_F(SecretFileTest, ASymbolicLinkIsRefused) {
  const std::string target = Secret("real-key", "k3y", 0600);
  const fs::path link = dir_ / "link-key";
  fs::create_symlink(target, link);
  auto read = core::ReadSecretFile("tencent_im.secret_key_file", link.string());
  ASSERT_FALSE(read);
  EXPECT_THAT(read.error().message, HasSubstr("tencent_im.secret_key_file: \"" + link.string() +
                                              "\" is a symbolic link"));
}

TEST_F(SecretFileTest, AFifoIsRefusedWithoutBlocking) {
  const fs::path fifo = dir_ / "fifo-key";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto read = std::async(std::launch::async, [&] {
    return core::ReadSecretFile("mysql.password_file", fifo.string());
  });
  // A blocking open or read waits for a writer that never comes; give it one if it hangs, so
  // the test fails instead of hanging.
  if (read.wait_for(std::chrono::seconds(20)) != std::future_status::ready) {
    const int writer = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
    if (writer >= 0) ::close(writer);
    ADD_FAILURE() << "reading a FIFO blocked";
  }
  auto result = read.get();
  ASSERT_FALSE(result);
  EXPECT_THAT(result.error().message,
              HasSubstr("mysql.password_file: \"" + fifo.string() + "\" is a FIFO"));
}

TEST_F(SecretFileTest, ADirectoryAndADeviceAreRefused) {
  fs::create_directories(dir_ / "a-dir");
  auto dir = core::ReadSecretFile("mysql.password_file", (dir_ / "a-dir").string());
  ASSERT_FALSE(dir);
  EXPECT_THAT(dir.error().message, HasSubstr("is a directory, not a regular file"));
  auto device = core::ReadSecretFile("mysql.password_file", "/dev/zero");
  ASSERT_FALSE(device);
  EXPECT_THAT(device.error().message, HasSubstr("\"/dev/zero\" is a device"));
}

TEST_F(SecretFileTest, ALibraryFileFollowsLinksUnlessItIsSecret) {
  const std::string target = Secret("client.key", "pem", 0644);
  const fs::path link = dir_ / "linked.key";
  fs::create_symlink(target, link);
  auto ca = core::CheckLibraryFile("mysql.ssl_ca", link.string(), core::FileRule::kPublic);
  ASSERT_TRUE(ca) << ca.error().message;
  EXPECT_EQ(*ca, "");
  EXPECT_FALSE(core::CheckLibraryFile("mysql.ssl_key", link.string(), core::FileRule::kSecret));
  auto key = core::CheckLibraryFile("mysql.ssl_key", target, core::FileRule::kSecret);
  ASSERT_TRUE(key);
  EXPECT_THAT(*key, HasSubstr("readable by its group or other users"));
}

TEST_F(SecretFileTest, ARelativeNameUnderCredentialsDirectoryIsAStartTimeCopy) {
  const std::string config = Write("relay.toml", "");
  EXPECT_FALSE(core::IsCredentialCopy("mysql-password", config));
  ScopedEnv creds("CREDENTIALS_DIRECTORY", (dir_ / "creds").c_str());
  EXPECT_TRUE(core::IsCredentialCopy("mysql-password", config));
  EXPECT_TRUE(core::IsCredentialCopy((dir_ / "creds" / "x").string(), config));
  EXPECT_FALSE(core::IsCredentialCopy("/etc/room-outbox/mysql-password", config));
  EXPECT_FALSE(core::IsCredentialCopy("../mysql-password", config));
  EXPECT_FALSE(core::IsCredentialCopy("", config));
}

TEST_F(SecretFileTest, TheOperatorCommandsNeverOpenTheImKeyFile) {
  Secret("pw", "db-pw", 0600);
  const std::string config = Write("relay.toml",
                                   "[mysql]\npassword_file = \"pw\"\n"
                                   "[tencent_im]\nsecret_key_file = \"missing-key\"\n");
  auto ops = relay::LoadConfig(config, core::SecretUse::kDatabaseOnly);
  ASSERT_TRUE(ops) << ops.error().message;
  EXPECT_EQ(ops->mysql.password, "db-pw");
  EXPECT_EQ(ops->tencent_im.secret_key, "");
  auto daemon = relay::LoadConfig(config);
  ASSERT_FALSE(daemon);
  EXPECT_THAT(daemon.error().message, HasSubstr("tencent_im.secret_key_file"));
}

TEST_F(SecretFileTest, AWipedStringLeavesNoByteOfTheSecretInItsBuffer) {
  std::string secret(200, 'k');
  const char* buffer = secret.data();
  const size_t capacity = secret.capacity();
  core::WipeString(secret);
  EXPECT_TRUE(secret.empty());
  ASSERT_EQ(secret.data(), buffer);  // the same buffer, still owned by the string
  for (size_t i = 0; i < capacity; ++i) {
    ASSERT_EQ(buffer[i], '\0') << "byte " << i;
  }
}

// The hook's loader hands its caller the warnings of the files it read; the TLS warning about a
// link to another host is CreateHook's (through HookOptions::log), not the loader's.
TEST_F(SecretFileTest, LoadHookOptionsReturnsTheWarningOfAGroupReadableSecretFile) {
  const std::string password = Secret("pw", "db-pw\n", 0640);
  Secret("key", "k3y\n", 0600);
  const std::string config = Write("relay.toml",
                                   "[mysql]\nhost = \"db.internal\"\npassword_file = \"pw\"\n"
                                   "[tencent_im]\nsecret_key_file = \"key\"\n");
  Error error;
  std::vector<std::string> warnings{"kept"};
  auto options = LoadHookOptions(config, &error, &warnings);
  ASSERT_TRUE(options) << error.message;
  EXPECT_EQ(options->mysql.password, "db-pw");
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_EQ(warnings[0], "kept") << "appended, never replaced";
  EXPECT_THAT(warnings[1], HasSubstr("mysql.password_file: \"" + password +
                                     "\" is readable by its group or other users (mode 640)"));
  EXPECT_THAT(warnings[1], Not(HasSubstr("db-pw")));
  EXPECT_TRUE(LoadHookOptions(config, &error).has_value()) << "the form without warnings";

  ASSERT_EQ(::chmod(password.c_str(), 0600), 0);
  warnings.clear();
  ASSERT_TRUE(LoadHookOptions(config, &error, &warnings)) << error.message;
  EXPECT_TRUE(warnings.empty()) << warnings.front();
}

TEST(TlsExposureWarningTest, WarnsForAnUnverifiedTcpLinkToAnotherHostOnly) {
  MysqlOptions o;
  o.host = "db.internal";
  for (SslMode mode : {SslMode::kDisabled, SslMode::kPreferred, SslMode::kRequired}) {
    o.ssl_mode = mode;
    EXPECT_THAT(core::TlsExposureWarning(o), HasSubstr("mysql.host \"db.internal\""))
        << SslModeName(mode);
  }
  for (SslMode mode : {SslMode::kVerifyCa, SslMode::kVerifyIdentity}) {
    o.ssl_mode = mode;
    EXPECT_EQ(core::TlsExposureWarning(o), "") << SslModeName(mode);
  }
  o.ssl_mode = SslMode::kPreferred;
  for (const char* host : {"localhost", "127.0.0.1", "127.1.2.3", "::1"}) {
    o.host = host;
    EXPECT_EQ(core::TlsExposureWarning(o), "") << host;
  }
  o.host = "db.internal";
  o.socket = "/run/mysqld/mysqld.sock";
  EXPECT_EQ(core::TlsExposureWarning(o), "");
}

// Connector/C 3.3 (Debian 12) refuses a server without TLS before the login in every mode that
// requires TLS (MysqlTlsTest shows it on the wire); what --check-config prints says so.
TEST(TlsExposureWarningTest, EveryModeThatRequiresTlsRefusesBeforeTheLoginAndSaysSo) {
  for (SslMode mode : {SslMode::kRequired, SslMode::kVerifyCa, SslMode::kVerifyIdentity}) {
    EXPECT_TRUE(core::RefusesServerWithoutTlsBeforeLogin(mode)) << SslModeName(mode);
    EXPECT_THAT(core::SslModeProtection(mode),
                HasSubstr("a server that offers no TLS is refused before the login is sent"));
  }
  for (SslMode mode : {SslMode::kDisabled, SslMode::kPreferred}) {
    EXPECT_FALSE(core::RefusesServerWithoutTlsBeforeLogin(mode)) << SslModeName(mode);
    EXPECT_THAT(core::SslModeProtection(mode), Not(HasSubstr("refused")));
  }
  EXPECT_THAT(core::SslModeProtection(SslMode::kRequired),
              HasSubstr("not against one who poses as the server with a certificate of its own"));
}

}  // namespace
}  // namespace room_outbox::testing
