// Secrets of the config (the MariaDB password, the Tencent IM secret key) never come from the
// command line:
//   - from a file named by mysql.password_file / tencent_im.secret_key_file. A relative path is
//     resolved against $CREDENTIALS_DIRECTORY when set (systemd LoadCredential=), else against the
//     directory of the config file. One trailing newline (and \r) is trimmed.
//   - from the environment: ROOM_OUTBOX_MYSQL_PASSWORD, ROOM_OUTBOX_TIM_SECRET_KEY.
//   The file is read under the rules of secret_file.h: no symbolic link, a regular file only,
//   never a blocking read, a warning when its group or other users may read it.
//   When both are present the ENVIRONMENT WINS: an operator can override a deployed file for one
//   run without editing it, which is the usual precedence of the environment over files. A named
//   file must still be readable (a typo in a path is an error even when the variable is set).
// Error texts name the key and the path, never a secret's content.
#pragma once

#include <string>
#include <vector>

#include "core/config/secret_file.h"
#include "core/result.h"

namespace room_outbox::core {

inline constexpr const char* kMysqlPasswordEnv = "ROOM_OUTBOX_MYSQL_PASSWORD";
inline constexpr const char* kTimSecretKeyEnv = "ROOM_OUTBOX_TIM_SECRET_KEY";

// `name` as a path: absolute as is, relative against $CREDENTIALS_DIRECTORY when set, else
// against the directory of `config_path`.
std::string ResolveSecretPath(const std::string& name, const std::string& config_path);

// True when `file` resolves to a path inside $CREDENTIALS_DIRECTORY: systemd copied it there at
// the start of the service (LoadCredential=), so re-reading it later never sees a changed source
// file; only a restart makes a new copy.
bool IsCredentialCopy(const std::string& file, const std::string& config_path);

// The secret of `key` (e.g. "mysql.password_file"): the environment variable `env_name` when set
// and non-empty, else the content of `file` (resolved as above; empty: none), else "". A warning
// about the file's mode is appended to `warnings` (may be null).
Result<std::string> LoadSecret(const std::string& key, const std::string& file,
                               const char* env_name, const std::string& config_path,
                               std::vector<std::string>* warnings = nullptr);

// A file that a library reads itself (the [mysql] TLS files): `file` resolved as above, opened
// and checked under `rule` (secret_file.h: kSecret for the client key), its content not read
// here. Empty `file`: "". Errors name the key and the path; a warning about the file's mode goes
// to `warnings` (may be null).
Result<std::string> ResolveReadableFile(const std::string& key, const std::string& file,
                                        const std::string& config_path, FileRule rule,
                                        std::vector<std::string>* warnings = nullptr);

}  // namespace room_outbox::core
