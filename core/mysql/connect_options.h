// What MariaDbConnection::Connect sets on a MYSQL handle before mysql_real_connect, and checks
// right after it: timeouts, protocol, character set, and TLS as MysqlOptions::ssl_mode says.
//
// TLS with MariaDB Connector/C (checked against the Debian 12 library, 3.3):
//   disabled         nothing is asked for (and verification is switched off explicitly)
//   preferred        TLS when the server offers it, unverified; a unix socket is left plain
//   required         TLS asked for, unverified; Connector/C 3.3 falls back to a plain connection
//                    when the server offers no TLS, so CheckTlsInUse refuses that connection
//   verify_ca        as required, with ssl_ca: Connector/C verifies the chain whenever a CA is set
//   verify_identity  as verify_ca and MYSQL_OPT_SSL_VERIFY_SERVER_CERT: the host name must match
//                    the certificate (without ssl_ca, the system's CAs verify the chain)
// ssl_cert/ssl_key give a client certificate; server_public_key_file the RSA key for
// caching_sha2_password without TLS. The key file's content is read by the library only.
#pragma once

#include <mysql.h>

#include <chrono>
#include <string>

#include "core/result.h"
#include "room_outbox/options.h"

namespace room_outbox::core {

// How long a read or write on the socket may block before the call fails.
inline constexpr std::chrono::seconds kMysqlIoTimeout{30};

// Where a connection goes, for error texts: user@unix:/path/db or user@host:port/db. Never the
// password.
std::string ConnectTarget(const MysqlOptions& options);

// Sets every option of `options` on `mysql`. Errors: kInvalidArgument naming the option the
// library refused.
[[nodiscard]] Result<void> SetConnectOptions(MYSQL* mysql, const MysqlOptions& options);

// After mysql_real_connect: kPermissionDenied when options.ssl_mode requires TLS and the
// connection has none.
[[nodiscard]] Result<void> CheckTlsInUse(MYSQL* mysql, const MysqlOptions& options);

}  // namespace room_outbox::core
