#include "core/mysql/connect_options.h"

#include <algorithm>
#include <chrono>
#include <cstdint>

namespace room_outbox::core {
namespace {

// The mode as applied: `preferred` asks for no TLS over a unix socket (a local connection, which
// the handshake would only slow down).
SslMode EffectiveSslMode(const MysqlOptions& options) {
  if (options.ssl_mode == SslMode::kPreferred && !options.socket.empty()) {
    return SslMode::kDisabled;
  }
  return options.ssl_mode;
}

template <class T>
Result<void> SetOption(MYSQL* mysql, mysql_option option, const T* value, const char* name) {
  if (mysql_optionsv(mysql, option, value) != 0) {
    return Fail(ErrorCode::kInvalidArgument,
                std::string("mysql_optionsv(") + name + "): rejected by the client library");
  }
  return {};
}

// An optional file path: set only when given.
Result<void> SetPath(MYSQL* mysql, mysql_option option, const std::string& path, const char* name) {
  return path.empty() ? Result<void>() : SetOption(mysql, option, path.c_str(), name);
}

unsigned int CeilSeconds(std::chrono::milliseconds ms) {
  const auto seconds = (std::max<int64_t>(ms.count(), 1) + 999) / 1000;
  return static_cast<unsigned int>(std::min<int64_t>(seconds, 3600));
}

// Timeouts (connect, and a socket read or write that blocks), protocol, no LOAD DATA LOCAL,
// utf8mb4.
Result<void> SetClientOptions(MYSQL* mysql, const MysqlOptions& options) {
  const unsigned int connect_timeout =
      CeilSeconds(options.connect_timeout.count() > 0 ? options.connect_timeout
                                                      : std::chrono::milliseconds(5000));
  const auto io_timeout = static_cast<unsigned int>(kMysqlIoTimeout.count());
  const unsigned int protocol = options.socket.empty() ? MYSQL_PROTOCOL_TCP : MYSQL_PROTOCOL_SOCKET;
  const unsigned int no_local_infile = 0;
  for (auto set : {
           SetOption(mysql, MYSQL_OPT_CONNECT_TIMEOUT, &connect_timeout,
                     "MYSQL_OPT_CONNECT_TIMEOUT"),
           SetOption(mysql, MYSQL_OPT_READ_TIMEOUT, &io_timeout, "MYSQL_OPT_READ_TIMEOUT"),
           SetOption(mysql, MYSQL_OPT_WRITE_TIMEOUT, &io_timeout, "MYSQL_OPT_WRITE_TIMEOUT"),
           SetOption(mysql, MYSQL_OPT_PROTOCOL, &protocol, "MYSQL_OPT_PROTOCOL"),
           SetOption(mysql, MYSQL_OPT_LOCAL_INFILE, &no_local_infile, "MYSQL_OPT_LOCAL_INFILE"),
           SetOption(mysql, MYSQL_SET_CHARSET_NAME, "utf8mb4", "MYSQL_SET_CHARSET_NAME"),
           SetOption(mysql, MARIADB_OPT_RESTRICTED_AUTH, kAllowedAuthPlugins,
                     "MARIADB_OPT_RESTRICTED_AUTH"),
       }) {
    if (!set) {
      return set;
    }
  }
  return {};
}

// Connector/C 3.3 refuses a server whose handshake lacks CLIENT_SSL before it writes a byte when a
// peer fingerprint is set, and compares fingerprints only when the one set is not empty
// (my_auth.c send_client_reply_packet, ma_pvio.c ma_pvio_start_ssl). 3.4 compares an empty one
// too, and would refuse every server.
bool EmptyFingerprintRefusesBeforeLogin() {
  const unsigned long version = mysql_get_client_version();
  return version >= 30300 && version < 30400;
}

// What a client library without that refusal does, for the texts of SslModeProtection and
// TlsExposureWarning.
std::string LoginBeforeRefusal() {
  return std::string("Connector/C ") + mysql_get_client_info() +
         " sends the login (user name and the answer to the server's challenge) to a server "
         "that offers no TLS before the connection is refused";
}

// required and verify_ca: the empty peer fingerprint, so that a server without TLS gets no login.
Result<void> SetRefusalBeforeLogin(MYSQL* mysql, SslMode mode) {
  if ((mode != SslMode::kRequired && mode != SslMode::kVerifyCa) ||
      !EmptyFingerprintRefusesBeforeLogin()) {
    return {};
  }
  return SetOption(mysql, MARIADB_OPT_TLS_PEER_FP, "", "MARIADB_OPT_TLS_PEER_FP");
}

Result<void> SetTlsOptions(MYSQL* mysql, const MysqlOptions& options) {
  const SslMode mode = EffectiveSslMode(options);
  // Both flags are set explicitly: a newer Connector/C (3.4) verifies by default.
  const my_bool use_tls = mode != SslMode::kDisabled;
  const my_bool verify_host = mode == SslMode::kVerifyIdentity;
  const bool verify_chain = mode == SslMode::kVerifyCa || mode == SslMode::kVerifyIdentity;
  for (auto set : {
           SetOption(mysql, MYSQL_OPT_SSL_ENFORCE, &use_tls, "MYSQL_OPT_SSL_ENFORCE"),
           SetRefusalBeforeLogin(mysql, mode),
           SetOption(mysql, MYSQL_OPT_SSL_VERIFY_SERVER_CERT, &verify_host,
                     "MYSQL_OPT_SSL_VERIFY_SERVER_CERT"),
           SetPath(mysql, MYSQL_OPT_SSL_CA, verify_chain ? options.ssl_ca : "", "MYSQL_OPT_SSL_CA"),
           SetPath(mysql, MYSQL_OPT_SSL_CERT, use_tls ? options.ssl_cert : "",
                   "MYSQL_OPT_SSL_CERT"),
           SetPath(mysql, MYSQL_OPT_SSL_KEY, use_tls ? options.ssl_key : "", "MYSQL_OPT_SSL_KEY"),
           SetPath(mysql, MYSQL_SERVER_PUBLIC_KEY, options.server_public_key_file,
                   "MYSQL_SERVER_PUBLIC_KEY"),
       }) {
    if (!set) {
      return set;
    }
  }
  return {};
}

bool IsLoopbackHost(const std::string& host) {
  return host == "localhost" || host == "::1" || host == "[::1]" || host.rfind("127.", 0) == 0;
}

}  // namespace

bool RefusesServerWithoutTlsBeforeLogin(SslMode mode) {
  switch (mode) {
    case SslMode::kDisabled:
    case SslMode::kPreferred:
      return false;
    case SslMode::kRequired:
    case SslMode::kVerifyCa:
      return EmptyFingerprintRefusesBeforeLogin();
    case SslMode::kVerifyIdentity:
      return true;
  }
  return false;
}

std::string SslModeProtection(SslMode mode) {
  std::string what;
  switch (mode) {
    case SslMode::kDisabled:
      return "no TLS; protects against nothing (anyone on the path reads and changes the traffic)";
    case SslMode::kPreferred:
      return "TLS when offered, unverified; protects against a passive listener only while no "
             "one strips TLS, never against an active attacker";
    case SslMode::kRequired:
      what =
          "TLS or no connection, unverified; protects against a passive listener and against "
          "an attacker who strips TLS, not against one who poses as the server with a "
          "certificate of its own";
      break;
    case SslMode::kVerifyCa:
      what =
          "TLS with the server's certificate chain checked against ssl_ca; protects against an "
          "impostor without a certificate of that CA";
      break;
    case SslMode::kVerifyIdentity:
      what =
          "TLS, chain and host name checked; protects against an impostor, including another "
          "host with a certificate of the same CA";
      break;
  }
  if (RefusesServerWithoutTlsBeforeLogin(mode)) {
    return what + "; a server that offers no TLS is refused before the login is sent";
  }
  return what + "; " + LoginBeforeRefusal();
}

std::string TlsExposureWarning(const MysqlOptions& options) {
  if (!options.socket.empty() || IsLoopbackHost(options.host)) {
    return "";
  }
  const std::string where = "mysql.host \"" + options.host +
                            "\" is reached over TCP with ssl_mode \"" +
                            SslModeName(options.ssl_mode) + "\", which ";
  const std::string fix = "; set ssl_mode = \"verify_identity\" (or \"verify_ca\") with ssl_ca";
  switch (options.ssl_mode) {
    case SslMode::kDisabled:
    case SslMode::kPreferred:
      return where + "may run without TLS: anyone on the path can read or change the traffic" + fix;
    case SslMode::kRequired:
      return where + "encrypts but does not verify the server: anyone on the path can pose as it" +
             (RefusesServerWithoutTlsBeforeLogin(options.ssl_mode) ? ""
                                                                   : "; " + LoginBeforeRefusal()) +
             fix;
    case SslMode::kVerifyCa:
    case SslMode::kVerifyIdentity:
      break;
  }
  if (!RefusesServerWithoutTlsBeforeLogin(options.ssl_mode)) {
    return where + "verifies the server, but " + LoginBeforeRefusal();
  }
  return "";
}

std::string ConnectTarget(const MysqlOptions& options) {
  std::string where = options.user + "@";
  if (!options.socket.empty()) {
    where += "unix:" + options.socket;
  } else {
    where += options.host + ":" + std::to_string(options.port);
  }
  return where + "/" + options.database;
}

Result<void> SetConnectOptions(MYSQL* mysql, const MysqlOptions& options) {
  if (auto set = SetClientOptions(mysql, options); !set) {
    return set;
  }
  return SetTlsOptions(mysql, options);
}

Result<void> CheckTlsInUse(MYSQL* mysql, const MysqlOptions& options) {
  const SslMode mode = EffectiveSslMode(options);
  if (mode == SslMode::kDisabled || mode == SslMode::kPreferred) {
    return {};
  }
  if (mysql_get_ssl_cipher(mysql) == nullptr) {
    return Fail(ErrorCode::kPermissionDenied,
                "mysql_real_connect(" + ConnectTarget(options) + "): ssl_mode \"" +
                    SslModeName(options.ssl_mode) +
                    "\" requires TLS, but the server offered none; the connection was closed");
  }
  return {};
}

}  // namespace room_outbox::core
