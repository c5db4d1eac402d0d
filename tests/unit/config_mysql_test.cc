// [mysql] dialect, ssl_mode and the TLS files: defaults, accepted values, the rules between the
// keys (each error names its key with file:line:col), path resolution like the secret files, and
// --check-config's effective config, which shows them and loads back.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "config/config.h"
#include "support/config_fixture.h"

namespace room_outbox::relay {
namespace {

using ::testing::HasSubstr;

class ConfigMysqlTest : public ::room_outbox::testing::ConfigFixture {};

TEST_F(ConfigMysqlTest, DefaultsAreAutoDialectAndPreferredTls) {
  auto c = Load("");
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->mysql.dialect, SqlDialect::kAuto);
  EXPECT_EQ(c->mysql.ssl_mode, SslMode::kPreferred);
  EXPECT_EQ(c->mysql.ssl_ca, "");
  EXPECT_EQ(c->mysql.ssl_cert, "");
  EXPECT_EQ(c->mysql.ssl_key, "");
  EXPECT_EQ(c->mysql.server_public_key_file, "");
}

TEST_F(ConfigMysqlTest, EveryDialectAndSslModeIsAccepted) {
  for (auto [text, dialect] :
       {std::pair{"auto", SqlDialect::kAuto}, std::pair{"mariadb", SqlDialect::kMariaDb},
        std::pair{"mysql", SqlDialect::kMySql}}) {
    auto c = Load(std::string("[mysql]\ndialect = \"") + text + "\"\n");
    ASSERT_TRUE(c) << text << ": " << c.error().message;
    EXPECT_EQ(c->mysql.dialect, dialect) << text;
  }
  Write("ca.pem", "ca");
  for (auto [text, mode] :
       {std::pair{"disabled", SslMode::kDisabled}, std::pair{"preferred", SslMode::kPreferred},
        std::pair{"required", SslMode::kRequired}, std::pair{"verify_ca", SslMode::kVerifyCa},
        std::pair{"verify_identity", SslMode::kVerifyIdentity}}) {
    const bool verify = mode == SslMode::kVerifyCa || mode == SslMode::kVerifyIdentity;
    auto c = Load(std::string("[mysql]\nssl_mode = \"") + text + "\"\n" +
                  (verify ? "ssl_ca = \"ca.pem\"\n" : ""));
    ASSERT_TRUE(c) << text << ": " << c.error().message;
    EXPECT_EQ(c->mysql.ssl_mode, mode) << text;
  }
}

TEST_F(ConfigMysqlTest, UnknownValuesNameTheKeyAndWhatIsAccepted) {
  EXPECT_THAT(ErrorOf("[mysql]\ndialect = \"MySQL\"\n"),
              HasSubstr(":2:11: mysql.dialect: unknown value \"MySQL\" (accepted: \"auto\", "
                        "\"mariadb\", \"mysql\")"));
  EXPECT_THAT(ErrorOf("[mysql]\nssl_mode = \"on\"\n"),
              HasSubstr("mysql.ssl_mode: unknown value \"on\" (accepted: \"disabled\", "
                        "\"preferred\", \"required\", \"verify_ca\", \"verify_identity\")"));
}

TEST_F(ConfigMysqlTest, TlsKeysMustFitTheMode) {
  Write("ca.pem", "ca");
  Write("client.pem", "cert");
  Write("client.key", "key");
  EXPECT_THAT(ErrorOf("[mysql]\nssl_mode = \"verify_ca\"\n"),
              HasSubstr("mysql.ssl_mode: \"verify_ca\" needs ssl_ca"));
  EXPECT_THAT(ErrorOf("[mysql]\nssl_mode = \"required\"\nssl_ca = \"ca.pem\"\n"),
              HasSubstr(":3:10: mysql.ssl_ca: is used only with ssl_mode \"verify_ca\" or "
                        "\"verify_identity\", not \"required\""));
  EXPECT_THAT(ErrorOf("[mysql]\nssl_cert = \"client.pem\"\n"),
              HasSubstr("mysql.ssl_cert: ssl_cert and ssl_key (a client certificate) go together"));
  EXPECT_THAT(ErrorOf("[mysql]\nssl_key = \"client.key\"\n"), HasSubstr("mysql.ssl_key: "));
  EXPECT_THAT(ErrorOf("[mysql]\nssl_mode = \"disabled\"\nssl_cert = \"client.pem\"\n"
                      "ssl_key = \"client.key\"\n"),
              HasSubstr("mysql.ssl_cert: is not used with ssl_mode \"disabled\""));
  // verify_identity may use the system's CAs.
  auto c = Load(
      "[mysql]\nssl_mode = \"verify_identity\"\nssl_cert = \"client.pem\"\n"
      "ssl_key = \"client.key\"\n");
  ASSERT_TRUE(c) << c.error().message;
}

TEST_F(ConfigMysqlTest, TlsFilesResolveLikeSecretFilesAndMustBeReadable) {
  Write("ca.pem", "ca");
  Write("server-rsa.pem", "pub");
  auto c = Load(
      "[mysql]\nssl_mode = \"verify_ca\"\nssl_ca = \"ca.pem\"\n"
      "server_public_key_file = \"server-rsa.pem\"\n");
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->mysql.ssl_ca, (dir_ / "ca.pem").string());
  EXPECT_EQ(c->mysql.server_public_key_file, (dir_ / "server-rsa.pem").string());

  const std::filesystem::path creds = dir_ / "creds";
  std::filesystem::create_directories(creds);
  std::ofstream(creds / "client.key") << "key";
  std::ofstream(creds / "client.pem") << "cert";
  setenv("CREDENTIALS_DIRECTORY", creds.c_str(), 1);
  auto under_systemd = Load("[mysql]\nssl_cert = \"client.pem\"\nssl_key = \"client.key\"\n");
  unsetenv("CREDENTIALS_DIRECTORY");
  ASSERT_TRUE(under_systemd) << under_systemd.error().message;
  EXPECT_EQ(under_systemd->mysql.ssl_key, (creds / "client.key").string());

  EXPECT_THAT(ErrorOf("[mysql]\nssl_mode = \"verify_ca\"\nssl_ca = \"missing.pem\"\n"),
              HasSubstr("mysql.ssl_ca: cannot read \"" + (dir_ / "missing.pem").string() + "\""));
}

TEST_F(ConfigMysqlTest, EffectiveConfigShowsTheKeysAndLoadsBack) {
  Write("ca.pem", "ca");
  Write("client.pem", "cert");
  Write("client.key", "-----BEGIN PRIVATE KEY----- never shown");
  auto c = Load(
      "[mysql]\ndialect = \"mysql\"\nssl_mode = \"verify_identity\"\n"
      "ssl_ca = \"ca.pem\"\nssl_cert = \"client.pem\"\nssl_key = \"client.key\"\n");
  ASSERT_TRUE(c) << c.error().message;
  const std::string text = RenderEffectiveConfig(*c);
  EXPECT_THAT(text, HasSubstr("dialect = \"mysql\"\n"));
  EXPECT_THAT(text, HasSubstr("ssl_mode = \"verify_identity\"\n"));
  EXPECT_THAT(text, HasSubstr("ssl_key = \"" + (dir_ / "client.key").string() + "\"\n"));
  EXPECT_THAT(text, HasSubstr("server_public_key_file = \"\"\n"));
  EXPECT_THAT(text, ::testing::Not(HasSubstr("never shown")));
  auto back = LoadConfig(Write("rendered.toml", text));
  ASSERT_TRUE(back) << back.error().message << "\n" << text;
  EXPECT_EQ(back->mysql.dialect, SqlDialect::kMySql);
  EXPECT_EQ(back->mysql.ssl_mode, SslMode::kVerifyIdentity);
  EXPECT_EQ(back->mysql.ssl_cert, (dir_ / "client.pem").string());
}

}  // namespace
}  // namespace room_outbox::relay
