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

Result<void> SetTlsOptions(MYSQL* mysql, const MysqlOptions& options) {
  const SslMode mode = EffectiveSslMode(options);
  // Both flags are set explicitly: a newer Connector/C (3.4) verifies by default.
  const my_bool use_tls = mode != SslMode::kDisabled;
  const my_bool verify_host = mode == SslMode::kVerifyIdentity;
  const bool verify_chain = mode == SslMode::kVerifyCa || mode == SslMode::kVerifyIdentity;
  for (auto set : {
           SetOption(mysql, MYSQL_OPT_SSL_ENFORCE, &use_tls, "MYSQL_OPT_SSL_ENFORCE"),
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

const char* SslModeProtection(SslMode mode) {
  switch (mode) {
    case SslMode::kDisabled:
      return "no TLS; protects against nothing (anyone on the path reads and changes the traffic)";
    case SslMode::kPreferred:
      return "TLS when offered, unverified; protects against a passive listener only while no "
             "one strips TLS, never against an active attacker";
    case SslMode::kRequired:
      return "TLS or no connection, unverified; protects against a passive listener, not against "
             "an attacker who poses as the server";
    case SslMode::kVerifyCa:
      return "TLS with the server's certificate chain checked against ssl_ca; protects against an "
             "impostor without a certificate of that CA";
    case SslMode::kVerifyIdentity:
      return "TLS, chain and host name checked; protects against an impostor, including another "
             "host with a certificate of the same CA";
  }
  return "";
}

std::string TlsExposureWarning(const MysqlOptions& options) {
  if (!options.socket.empty() || IsLoopbackHost(options.host) ||
      options.ssl_mode == SslMode::kVerifyCa || options.ssl_mode == SslMode::kVerifyIdentity) {
    return "";
  }
  const std::string mode = SslModeName(options.ssl_mode);
  const std::string what =
      options.ssl_mode == SslMode::kRequired
          ? "encrypts but does not verify the server: anyone on the path can pose as it"
          : "may run without TLS: anyone on the path can read or change the traffic";
  return "mysql.host \"" + options.host + "\" is reached over TCP with ssl_mode \"" + mode +
         "\", which " + what +
         "; set ssl_mode = \"verify_identity\" (or \"verify_ca\") with ssl_ca";
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
