// TLS to the database for real: a private MariaDB on a free loopback port with a certificate this
// test makes (openssl: a CA, a server certificate for the name "localhost" only, and a second CA
// that signed nothing), and, for the test that needs it, a second one without TLS. Every ssl_mode
// against them, through MysqlOptions (what HookOptions carries), a Hook's commit, and
// outbox-relay's [mysql] keys.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/mysql/connect_options.h"
#include "core/mysql/connection.h"
#include "room_outbox/hook.h"
#include "support/fake_im_server.h"
#include "support/fake_mysql_server.h"
#include "support/mysql_admin.h"
#include "support/private_mariadb.h"
#include "support/relay_command.h"

namespace room_outbox::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

// A TCP port nobody listens on now (the kernel's choice for port 0).
uint16_t FreePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    ADD_FAILURE() << "no free port";
  }
  ::close(fd);
  return ntohs(addr.sin_port);
}

bool Run(const std::string& command) {
  const int rc = std::system((command + " >/dev/null 2>&1").c_str());
  EXPECT_EQ(rc, 0) << command;
  return rc == 0;
}

// ca.pem (+ its key), wrong-ca.pem, server.pem/server.key for DNS:localhost, signed by ca.pem.
bool MakeCertificates(const fs::path& dir) {
  const std::string d = dir.string();
  const std::string req = "openssl req -newkey rsa:2048 -nodes -days 2 ";
  return Run(req + "-x509 -keyout " + d + "/ca.key -out " + d + "/ca.pem -subj '/CN=test CA'") &&
         Run(req + "-x509 -keyout " + d + "/wrong-ca.key -out " + d +
             "/wrong-ca.pem -subj '/CN=another CA'") &&
         Run(req + "-keyout " + d + "/server.key -out " + d +
             "/server.csr -subj '/CN=localhost'") &&
         Run("printf 'subjectAltName=DNS:localhost\\n' > " + d + "/san.cnf") &&
         Run("openssl x509 -req -days 2 -in " + d + "/server.csr -CA " + d + "/ca.pem -CAkey " + d +
             "/ca.key -CAcreateserial -out " + d + "/server.pem -extfile " + d + "/san.cnf");
}

class MysqlTlsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ =
        new fs::path(fs::temp_directory_path() / ("room-outbox-tls-" + std::to_string(::getpid())));
    fs::create_directories(*dir_);
    ASSERT_TRUE(MakeCertificates(*dir_));
    tls_port_ = FreePort();
    tls_ = new PrivateMariaDb(*dir_ / "tls-db");
    const std::string d = dir_->string();
    ASSERT_TRUE(tls_->Start({"--bind-address=127.0.0.1", "--port=" + std::to_string(tls_port_),
                             "--ssl-ca=" + d + "/ca.pem", "--ssl-cert=" + d + "/server.pem",
                             "--ssl-key=" + d + "/server.key"}));
    ASSERT_TRUE(AddUser(*tls_));
  }

  // A second server with TCP and no TLS, for the tests that need one (started once).
  static bool StartPlainServer() {
    if (plain_ != nullptr) return true;
    plain_port_ = FreePort();
    plain_ = new PrivateMariaDb(*dir_ / "plain-db");
    return plain_->Start({"--bind-address=127.0.0.1", "--port=" + std::to_string(plain_port_)}) &&
           AddUser(*plain_);
  }

  // The database tls_test and the user tls_user (password tls-pw) that may use it from anywhere.
  static bool AddUser(PrivateMariaDb& server) {
    if (!server.CreateDatabase("tls_test")) return false;
    std::string error;
    core::MysqlPtr root = ConnectAsRoot(server.socket(), error);
    std::vector<SqlRow> ignored;
    error = root ? RunSql(root.get(),
                          "CREATE USER 'tls_user'@'%' IDENTIFIED BY 'tls-pw'; "
                          "GRANT ALL ON tls_test.* TO 'tls_user'@'%'",
                          ignored)
                 : error;
    EXPECT_EQ(error, "");
    return error.empty();
  }
  static void TearDownTestSuite() {
    delete tls_;
    delete plain_;
    fs::remove_all(*dir_);
    delete dir_;
  }

  // TCP to the TLS server (or the plain one) as `host`, with `mode`.
  static MysqlOptions Options(SslMode mode, const std::string& host = "localhost",
                              bool plain_server = false) {
    MysqlOptions options;
    options.host = host;
    options.port = plain_server ? plain_port_ : tls_port_;
    options.user = "tls_user";
    options.password = "tls-pw";
    options.database = "tls_test";
    options.dialect = TestDialect();
    options.ssl_mode = mode;
    if (mode == SslMode::kVerifyCa || mode == SslMode::kVerifyIdentity) {
      options.ssl_ca = (*dir_ / "ca.pem").string();
    }
    return options;
  }

  // The cipher the connection negotiated; "" for none.
  static std::string Cipher(core::MariaDbConnection& conn) {
    auto rows = conn.QueryText("ssl_cipher", "SHOW SESSION STATUS LIKE 'Ssl_cipher'");
    EXPECT_TRUE(rows) << rows.error().message;
    return rows && !rows->empty() && (*rows)[0].size() > 1 ? (*rows)[0][1].value_or("") : "";
  }

  static fs::path* dir_;
  static PrivateMariaDb* tls_;
  static PrivateMariaDb* plain_;
  static uint16_t tls_port_;
  static uint16_t plain_port_;
};

fs::path* MysqlTlsTest::dir_ = nullptr;
PrivateMariaDb* MysqlTlsTest::tls_ = nullptr;
PrivateMariaDb* MysqlTlsTest::plain_ = nullptr;
uint16_t MysqlTlsTest::tls_port_ = 0;
uint16_t MysqlTlsTest::plain_port_ = 0;

TEST_F(MysqlTlsTest, VerifyIdentityNeedsTheRightCaAndAHostNameTheCertificateNames) {
  auto conn = core::MariaDbConnection::Connect(Options(SslMode::kVerifyIdentity));
  ASSERT_TRUE(conn) << conn.error().message;
  EXPECT_NE(Cipher(**conn), "");

  MysqlOptions wrong_ca = Options(SslMode::kVerifyIdentity);
  wrong_ca.ssl_ca = (*dir_ / "wrong-ca.pem").string();
  auto refused = core::MariaDbConnection::Connect(wrong_ca);
  ASSERT_FALSE(refused);
  EXPECT_THAT(refused.error().message, HasSubstr("tls_user@localhost:"));
  EXPECT_THAT(refused.error().message, HasSubstr("certificate"));
  EXPECT_THAT(refused.error().message, HasSubstr("[errno 2026]"));

  auto wrong_name =
      core::MariaDbConnection::Connect(Options(SslMode::kVerifyIdentity, "127.0.0.1"));
  ASSERT_FALSE(wrong_name);
  EXPECT_THAT(wrong_name.error().message, HasSubstr("Validation of SSL server certificate failed"));
}

TEST_F(MysqlTlsTest, VerifyCaChecksTheChainOnly) {
  // The certificate does not name 127.0.0.1: verify_ca does not look at names.
  auto conn = core::MariaDbConnection::Connect(Options(SslMode::kVerifyCa, "127.0.0.1"));
  ASSERT_TRUE(conn) << conn.error().message;
  EXPECT_NE(Cipher(**conn), "");
  MysqlOptions wrong_ca = Options(SslMode::kVerifyCa, "127.0.0.1");
  wrong_ca.ssl_ca = (*dir_ / "wrong-ca.pem").string();
  auto refused = core::MariaDbConnection::Connect(wrong_ca);
  ASSERT_FALSE(refused);
  EXPECT_THAT(refused.error().message, HasSubstr("certificate"));
}

TEST_F(MysqlTlsTest, RequiredRefusesAServerWithoutTlsAndPreferredFallsBack) {
  auto required = core::MariaDbConnection::Connect(Options(SslMode::kRequired, "127.0.0.1"));
  ASSERT_TRUE(required) << required.error().message;
  EXPECT_NE(Cipher(**required), "");
  auto preferred = core::MariaDbConnection::Connect(Options(SslMode::kPreferred, "127.0.0.1"));
  ASSERT_TRUE(preferred) << preferred.error().message;
  EXPECT_NE(Cipher(**preferred), "");
  auto disabled = core::MariaDbConnection::Connect(Options(SslMode::kDisabled, "127.0.0.1"));
  ASSERT_TRUE(disabled) << disabled.error().message;
  EXPECT_EQ(Cipher(**disabled), "");

  ASSERT_TRUE(StartPlainServer());
  auto plain = core::MariaDbConnection::Connect(Options(SslMode::kRequired, "127.0.0.1", true));
  ASSERT_FALSE(plain);
  EXPECT_EQ(plain.error().code, ErrorCode::kPermissionDenied);
  EXPECT_THAT(plain.error().message,
              HasSubstr("SSL is required, but the server does not support it [errno 2026]"));
  EXPECT_FALSE(core::MariaDbConnection::Connect(Options(SslMode::kVerifyCa, "127.0.0.1", true)));
  EXPECT_FALSE(
      core::MariaDbConnection::Connect(Options(SslMode::kVerifyIdentity, "localhost", true)));
  auto fallback = core::MariaDbConnection::Connect(Options(SslMode::kPreferred, "127.0.0.1", true));
  ASSERT_TRUE(fallback) << fallback.error().message;
  EXPECT_EQ(Cipher(**fallback), "");
}

TEST_F(MysqlTlsTest, AHookCommitsOverVerifiedTls) {
  FakeImServer im;
  ASSERT_TRUE(im.running()) << im.start_error();
  HookOptions options;
  options.mysql = Options(SslMode::kVerifyIdentity);
  options.tencent_im = im.ClientOptions();
  options.sync_publish = SyncPublishMode::kOff;
  Error error;
  auto hook = CreateHook(options, &error);
  ASSERT_TRUE(hook) << error.message;
  Command command{"tls-cmd-1", "room-1", "SendGift", "req-1", 1, "{}"};
  auto result = hook->Commit(command, {Event{"tls-evt-1", "RoomGiftSent", 1, 0, "{}"}});
  EXPECT_EQ(result.status, CommitStatus::kCommitted) << result.error.message;
}

TEST_F(MysqlTlsTest, OutboxRelayReadsTheTlsKeysOfItsConfig) {
  const fs::path config = *dir_ / "relay.toml";
  std::ofstream(config) << "[mysql]\nhost = \"localhost\"\nport = " << tls_port_
                        << "\nuser = \"tls_user\"\ndatabase = \"tls_test\"\n"
                        << "dialect = \"" << SqlDialectName(TestDialect()) << "\"\n"
                        << "ssl_mode = \"verify_identity\"\nssl_ca = \"ca.pem\"\n";
  std::ofstream(*dir_ / "pw") << "tls-pw";
  std::ofstream(config, std::ios::app) << "password_file = \"pw\"\n";
  CommandResult migrate = RunRelayCommand({"migrate", "--config", config.string()});
  EXPECT_EQ(migrate.exit_code, 0) << migrate.Describe();
  std::ofstream(config, std::ios::app) << "\n";
  std::string text;
  {
    std::ifstream in(config);
    text.assign(std::istreambuf_iterator<char>(in), {});
  }
  const size_t ca = text.find("ssl_ca = \"ca.pem\"");
  ASSERT_NE(ca, std::string::npos);
  text.replace(ca, 17, "ssl_ca = \"wrong-ca.pem\"");
  std::ofstream(config) << text;
  CommandResult refused = RunRelayCommand({"stats", "--config", config.string()});
  EXPECT_EQ(refused.exit_code, 1) << refused.Describe();
  EXPECT_THAT(refused.err, HasSubstr("certificate")) << refused.Describe();
}

// A server (or a man in the middle) that asks for the password in clear text by switching to
// mysql_clear_password (or dialog) is refused: the password never reaches the wire.
TEST_F(MysqlTlsTest, AClearTextPluginRequestIsRefusedAndThePasswordNeverSent) {
  for (const char* plugin : {"mysql_clear_password", "dialog"}) {
    FakeMysqlServer fake(plugin);
    MysqlOptions options = Options(SslMode::kDisabled, "127.0.0.1");
    options.port = fake.port();
    options.password = "never-on-the-wire";
    auto conn = core::MariaDbConnection::Connect(options);
    ASSERT_FALSE(conn) << plugin;
    EXPECT_THAT(conn.error().message, HasSubstr("restricted_auth")) << conn.error().message;
    const std::string received = fake.Received();
    EXPECT_THAT(received, HasSubstr("tls_user")) << "the login packet arrived";
    EXPECT_EQ(received.find("never-on-the-wire"), std::string::npos) << plugin;
  }
}

// verify_identity against a server that offers no TLS fails before the login packet: the server
// receives nothing at all, so no user name and no answer to its challenge.
TEST_F(MysqlTlsTest, VerifyIdentityFailsBeforeAuthenticationWithoutTls) {
  FakeMysqlServer fake;
  MysqlOptions options = Options(SslMode::kVerifyIdentity, "127.0.0.1");
  options.port = fake.port();
  auto conn = core::MariaDbConnection::Connect(options);
  ASSERT_FALSE(conn);
  EXPECT_THAT(conn.error().message,
              HasSubstr("SSL is required, but the server does not support it"));
  EXPECT_EQ(fake.packets(), 0) << "the client sent its login to a server without TLS";
}

// required and verify_ca against a server that offers no TLS fail before the login packet, as
// verify_identity does: the server receives no user name and no answer to its challenge.
TEST_F(MysqlTlsTest, RequiredAndVerifyCaSendNoLoginToAServerWithoutTls) {
  for (SslMode mode : {SslMode::kRequired, SslMode::kVerifyCa}) {
    EXPECT_TRUE(core::RefusesServerWithoutTlsBeforeLogin(mode)) << SslModeName(mode);
    FakeMysqlServer fake;
    MysqlOptions options = Options(mode, "127.0.0.1");
    options.port = fake.port();
    auto conn = core::MariaDbConnection::Connect(options);
    ASSERT_FALSE(conn) << SslModeName(mode);
    EXPECT_EQ(conn.error().code, ErrorCode::kPermissionDenied) << conn.error().message;
    EXPECT_THAT(conn.error().message,
                HasSubstr("SSL is required, but the server does not support it"));
    EXPECT_EQ(fake.packets(), 0) << SslModeName(mode) << ": the client sent "
                                 << fake.Received().size() << " bytes to a server without TLS";
  }
}

// Over a unix socket the modes that require TLS ask for it as over TCP: the TLS server's socket
// gives TLS, and the plain server's socket is refused by the client library before the login
// (its error, not CheckTlsInUse's after the handshake).
TEST_F(MysqlTlsTest, RequiredOverAUnixSocketNeedsTlsBeforeTheLogin) {
  MysqlOptions over_socket = Options(SslMode::kRequired);
  over_socket.socket = tls_->socket();
  auto conn = core::MariaDbConnection::Connect(over_socket);
  ASSERT_TRUE(conn) << conn.error().message;
  EXPECT_NE(Cipher(**conn), "");

  ASSERT_TRUE(StartPlainServer());
  over_socket.socket = plain_->socket();
  auto refused = core::MariaDbConnection::Connect(over_socket);
  ASSERT_FALSE(refused);
  EXPECT_THAT(refused.error().message,
              HasSubstr("SSL is required, but the server does not support it"));
  MysqlOptions preferred = over_socket;
  preferred.ssl_mode = SslMode::kPreferred;
  auto plain = core::MariaDbConnection::Connect(preferred);
  ASSERT_TRUE(plain) << plain.error().message;
  EXPECT_EQ(Cipher(**plain), "");
}

// CreateHook says through the host's log, before it connects, when the link to another host is
// not verified: here a TCP link in required mode to a documentation address (nothing answers).
TEST_F(MysqlTlsTest, CreateHookLogsTheTlsWarningOfAnUnverifiedLinkToAnotherHost) {
  HookOptions options;
  options.mysql = Options(SslMode::kRequired, "192.0.2.10");
  options.mysql.connect_timeout = std::chrono::milliseconds(500);
  options.tencent_im.sdk_app_id = 1400012345;
  options.tencent_im.secret_key = "k";
  options.sync_publish = SyncPublishMode::kOff;
  std::vector<std::string> warnings;
  options.log = [&](LogLevel level, std::string_view line) {
    if (level == LogLevel::kWarn) warnings.emplace_back(line);
  };
  Error error;
  EXPECT_FALSE(CreateHook(options, &error));
  ASSERT_EQ(warnings.size(), 1u) << error.message;
  EXPECT_THAT(warnings[0], HasSubstr("configuration warning: mysql.host \"192.0.2.10\" is "
                                     "reached over TCP with ssl_mode \"required\""));
  EXPECT_THAT(warnings[0], Not(HasSubstr("tls-pw")));

  warnings.clear();
  options.mysql = Options(SslMode::kVerifyIdentity);  // loopback and verified: nothing to say
  auto hook = CreateHook(options, &error);
  EXPECT_TRUE(hook) << error.message;
  EXPECT_TRUE(warnings.empty()) << warnings.front();
}

// --check-config and the start say when the link to another host is not verified.
TEST_F(MysqlTlsTest, AnUnverifiedLinkToAnotherHostIsWarnedAbout) {
  const fs::path config = *dir_ / "remote.toml";
  std::ofstream(*dir_ / "remote-key") << "k";
  fs::permissions(*dir_ / "remote-key", fs::perms::owner_read | fs::perms::owner_write);
  std::ofstream(config)
      << "[mysql]\nhost = \"192.0.2.10\"\nssl_mode = \"required\"\n"
      << "[tencent_im]\nsdk_app_id = 1400012345\nsecret_key_file = \"remote-key\"\n";
  CommandResult unverified = RunRelayCommand({"--config", config.string(), "--check-config"});
  EXPECT_EQ(unverified.exit_code, 0) << unverified.Describe();
  EXPECT_THAT(unverified.err, HasSubstr("warning: mysql.host \"192.0.2.10\""));
  EXPECT_THAT(unverified.out, HasSubstr("# ssl_mode required: TLS or no connection, unverified"));
  std::ofstream(config)
      << "[mysql]\nhost = \"192.0.2.10\"\nssl_mode = \"verify_identity\"\n"
      << "ssl_ca = \"" << (*dir_ / "ca.pem").string() << "\"\n"
      << "[tencent_im]\nsdk_app_id = 1400012345\nsecret_key_file = \"remote-key\"\n";
  CommandResult verified = RunRelayCommand({"--config", config.string(), "--check-config"});
  EXPECT_EQ(verified.exit_code, 0) << verified.Describe();
  EXPECT_THAT(verified.err, ::testing::Not(HasSubstr("warning")));
}

}  // namespace
}  // namespace room_outbox::testing
