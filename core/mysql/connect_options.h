// What MariaDbConnection::Connect sets on a MYSQL handle before mysql_real_connect, and checks
// right after it: timeouts, protocol, character set, and TLS as MysqlOptions::ssl_mode says.
//
// TLS with MariaDB Connector/C (checked against the Debian 12 library, 3.3.20, and the 3.3 source):
//   disabled         nothing is asked for (and verification is switched off explicitly)
//   preferred        TLS when the server offers it, unverified; a unix socket is left plain
//   required         TLS asked for, unverified, and an empty peer fingerprint
//                    (MARIADB_OPT_TLS_PEER_FP ""): Connector/C 3.3 then refuses a server whose
//                    handshake does not offer TLS before it writes a byte, and skips the
//                    fingerprint check of an empty fingerprint once TLS is up
//   verify_ca        as required (the empty fingerprint too), with ssl_ca: Connector/C verifies the
//                    chain whenever a CA is set
//   verify_identity  as verify_ca and MYSQL_OPT_SSL_VERIFY_SERVER_CERT: the host name must match
//                    the certificate (without ssl_ca, the system's CAs verify the chain); the
//                    library refuses a server without TLS before the login by itself
// CheckTlsInUse stays as the check after the handshake, for every mode that requires TLS.
// The refusal reads the handshake of the very connection the login would go over (there is no
// separate probe), so a man in the middle who strips TLS from the server's handshake gets no
// login: neither the user name nor the auth plugin's answer to the challenge. That holds over a
// unix socket too (required and the verify modes ask for TLS there as over TCP; preferred asks
// for none: a local connection). With a Connector/C other than 3.3 (3.4 compares an empty
// fingerprint and would refuse every server) no fingerprint is set, the login goes out before
// CheckTlsInUse refuses the connection, and SslModeProtection and TlsExposureWarning say so.
// What each mode protects against: disabled and preferred, nothing active (a man in the middle
// reads or strips the link); required, a passive listener and a man in the middle who strips TLS,
// but not one who offers TLS with a certificate of his own: the client accepts any certificate
// and logs in through him (he can relay the server's challenge and the client's answer to the
// real server, with each allowed plugin, and caching_sha2_password's full authentication sends
// him the password itself inside the TLS he ends); verify_ca, also an impostor without a
// certificate of the CA; verify_identity, also another host holding a certificate of the same CA.
// Only the verify modes stop an active man in the middle. Authentication plugins: always restricted
// to kAllowedAuthPlugins (MARIADB_OPT_RESTRICTED_AUTH), so a server (or anyone in the path) cannot
// ask for mysql_clear_password or dialog, which would send the password itself. ssl_cert/ssl_key
// give a client certificate; server_public_key_file the RSA key for caching_sha2_password without
// TLS. The key file's content is read by the library only.
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

// Whether a connection in `mode` refuses a server that offers no TLS before the login packet,
// with the Connector/C this process runs with: verify_identity always; required and verify_ca
// with Connector/C 3.3 (the empty fingerprint above); disabled and preferred never.
bool RefusesServerWithoutTlsBeforeLogin(SslMode mode);

// One sentence: what `mode` protects the database link against (the table above), and whether a
// server without TLS is refused before the login.
std::string SslModeProtection(SslMode mode);

// "" or, for a TCP connection to a host that is not loopback (localhost, 127.0.0.0/8, ::1) with
// an ssl_mode that does not verify the server (disabled, preferred, required), a warning saying
// what an active attacker on the path can do; also for a verify mode when the client library
// sends the login before it refuses a server without TLS.
std::string TlsExposureWarning(const MysqlOptions& options);

}  // namespace room_outbox::core
