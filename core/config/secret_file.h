// Reading one secret file (mysql.password_file, tencent_im.secret_key_file) safely:
//   - opened with O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC: a symbolic link as the last path component
//     is refused, and a FIFO or device never blocks the reader (the open returns at once);
//   - fstat on the open descriptor: anything but a regular file (a FIFO, a directory, a device,
//     a socket) is refused before a byte is read;
//   - a file that its group or other users may read is loaded, with a warning: the secret is
//     exposed to those users.
// Errors and warnings name the key and the path, never the content.
#pragma once

#include <string>

#include "core/result.h"
#include "core/wipe.h"

namespace room_outbox::core {

struct SecretFileContent {
  SecretOwner<std::string>
      content;          // after CheckSecretContent (input_limits.h); wiped when dropped
  std::string warning;  // "" or why the file's mode exposes the secret
};

// The content of `path` for config key `key`, under the rules above.
Result<SecretFileContent> ReadSecretFile(const std::string& key, const std::string& path);

// For a file that a library reads itself: kSecret (a TLS client key) is opened and checked as
// ReadSecretFile does, with the same warning; kPublic (a CA bundle, a server's public key, often
// a symbolic link into /etc/ssl/certs) follows links and gives no warning, but must still be a
// regular file that opens without blocking. Returns the warning, or "".
enum class FileRule { kSecret, kPublic };
Result<std::string> CheckLibraryFile(const std::string& key, const std::string& path,
                                     FileRule rule);

}  // namespace room_outbox::core
