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
// What each mode protects against: disabled and preferred, nothing active (a man in the middle
// reads or strips the link); required, a passive listener only (anyone who can sit in the path
// can present any certificate); verify_ca, also an impostor without a certificate of the CA;
// verify_identity, also another host holding a certificate of the same CA.
// Without TLS the library still sends the login (user name and the auth plugin's answer to the
// server's challenge) before CheckTlsInUse can refuse the connection, for every mode but
// verify_identity: Connector/C 3.3 refuses a server without TLS before the login only when it is
// to verify the server's certificate (MYSQL_OPT_SSL_VERIFY_SERVER_CERT).
// Authentication plugins: always restricted to kAllowedAuthPlugins (MARIADB_OPT_RESTRICTED_AUTH),
// so a server (or anyone in the path) cannot ask for mysql_clear_password or dialog, which would
// send the password itself.
// ssl_cert/ssl_key give a client certificate; server_public_key_file the RSA key for
// caching_sha2_password without TLS. The key file's content is read by the library only.
#pragma once

#include <mysql.h>

#include <chrono>
#include <string>

#include "core/result.h"
#include "room_outbox/options.h"

namespace room_outbox::core {

// The authentication plugins a connection may use: the ones the supported servers use for
// passwords, none of which sends the password in clear text. "client_ed25519" is MariaDB's
// ed25519 (Connector/C's client plugin name).
inline constexpr const char* kAllowedAuthPlugins =
    "mysql_native_password,caching_sha2_password,client_ed25519";

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

// One sentence: what `mode` protects the database link against (the table above).
const char* SslModeProtection(SslMode mode);

// "" or, for a TCP connection to a host that is not loopback (localhost, 127.0.0.0/8, ::1) with
// an ssl_mode that does not verify the server (disabled, preferred, required), a warning saying
// what an active attacker on the path can do.
std::string TlsExposureWarning(const MysqlOptions& options);

}  // namespace room_outbox::core
