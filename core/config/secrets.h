// Secrets of the config (the MariaDB password, the Tencent IM secret key) never come from the
// command line:
//   - from a file named by mysql.password_file / tencent_im.secret_key_file. A relative path is
//     resolved against $CREDENTIALS_DIRECTORY when set (systemd LoadCredential=), else against the
//     directory of the config file. One trailing newline (and \r) is trimmed.
//   - from the environment: ROOM_OUTBOX_MYSQL_PASSWORD, ROOM_OUTBOX_TIM_SECRET_KEY.
//   When both are present the ENVIRONMENT WINS: an operator can override a deployed file for one
//   run without editing it, which is the usual precedence of the environment over files. A named
//   file must still be readable (a typo in a path is an error even when the variable is set).
// Error texts name the key and the path, never a secret's content.
#pragma once

#include <string>

#include "core/result.h"

namespace room_outbox::core {

inline constexpr const char* kMysqlPasswordEnv = "ROOM_OUTBOX_MYSQL_PASSWORD";
inline constexpr const char* kTimSecretKeyEnv = "ROOM_OUTBOX_TIM_SECRET_KEY";

// The secret of `key` (e.g. "mysql.password_file"): the environment variable `env_name` when set
// and non-empty, else the content of `file` (resolved as above; empty: none), else "".
Result<std::string> LoadSecret(const std::string& key, const std::string& file,
                               const char* env_name, const std::string& config_path);

// A file that a library reads itself (the [mysql] TLS files: the client key is a secret, so the
// rule of the secret files holds for all of them): `file` resolved as above, checked readable
// (its content is not read here). Empty `file`: "". Errors name the key and the path.
Result<std::string> ResolveReadableFile(const std::string& key, const std::string& file,
                                        const std::string& config_path);

}  // namespace room_outbox::core
