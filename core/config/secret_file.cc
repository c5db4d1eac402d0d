#include "core/config/secret_file.h"

#include <fcntl.h>
#include <openssl/crypto.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/fd.h"
#include "core/input_limits.h"

namespace room_outbox::core {
namespace {

constexpr size_t kReadChunk = 512;

std::string Where(const std::string& key, const std::string& path) {
  return key + ": \"" + path + "\"";
}

const char* KindOf(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

struct OpenedSecret {
  Fd fd;
  std::string warning;
};

Result<OpenedSecret> OpenSecret(const std::string& key, const std::string& path,
                                FileRule rule = FileRule::kSecret) {
  OpenedSecret opened;
  const int no_follow = rule == FileRule::kSecret ? O_NOFOLLOW : 0;
  opened.fd = Fd(::open(path.c_str(), O_RDONLY | no_follow | O_NONBLOCK | O_CLOEXEC));
  if (!opened.fd) {
    const int err = errno;
    if (err == ELOOP && rule == FileRule::kSecret) {
      return Fail(ErrorCode::kInvalidArgument,
                  Where(key, path) +
                      " is a symbolic link; secret files are opened without following links");
    }
    return Fail(ErrorCode::kInvalidArgument,
                key + ": cannot read \"" + path + "\": " + std::strerror(err));
  }
  struct stat st {};
  if (::fstat(opened.fd.get(), &st) != 0) {
    return Fail(ErrorCode::kInvalidArgument,
                Where(key, path) + " cannot be examined: " + std::strerror(errno));
  }
  if (!S_ISREG(st.st_mode)) {
    return Fail(ErrorCode::kInvalidArgument,
                Where(key, path) + " is " + KindOf(st.st_mode) + ", not a regular file; refused");
  }
  if (rule == FileRule::kSecret && (st.st_mode & (S_IRGRP | S_IROTH)) != 0) {
    opened.warning = Where(key, path) + " is readable by its group or other users (mode " +
                     std::to_string((st.st_mode >> 6) & 7) + std::to_string((st.st_mode >> 3) & 7) +
                     std::to_string(st.st_mode & 7) + "); make it 0600 or 0400";
  }
  return opened;
}

}  // namespace

Result<SecretFileContent> ReadSecretFile(const std::string& key, const std::string& path) {
  auto opened = OpenSecret(key, path);
  if (!opened) {
    return Fail(opened.error());
  }
  // Room for the largest accepted file and one more read, so the string never reallocates (which
  // would free a copy unwiped); the read buffer is wiped on every way out.
  SecretOwner<std::string> content;
  content.reserve(kMaxSecretBytes + kReadChunk);
  char buffer[kReadChunk];
  const struct Cleanse {
    char* bytes;
    ~Cleanse() { OPENSSL_cleanse(bytes, kReadChunk); }
  } cleanse{buffer};
  for (;;) {
    const ssize_t n = ::read(opened->fd.get(), buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      return Fail(ErrorCode::kInvalidArgument,
                  Where(key, path) + " cannot be read: " + std::strerror(errno));
    }
    if (n == 0) break;
    content.append(buffer, static_cast<size_t>(n));
    if (content.size() > kMaxSecretBytes) {
      return Fail(ErrorCode::kInvalidArgument, Where(key, path) + " is larger than " +
                                                   std::to_string(kMaxSecretBytes) + " bytes");
    }
  }
  auto checked = CheckSecretContent(Where(key, path), std::move(content));
  if (!checked) {
    return Fail(checked.error());
  }
  SecretFileContent read{std::move(*checked), std::move(opened->warning)};  // wipes *checked
  return read;
}

Result<std::string> CheckLibraryFile(const std::string& key, const std::string& path,
                                     FileRule rule) {
  auto opened = OpenSecret(key, path, rule);
  if (!opened) {
    return Fail(opened.error());
  }
  return std::move(opened->warning);
}

}  // namespace room_outbox::core
