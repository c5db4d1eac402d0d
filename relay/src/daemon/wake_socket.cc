#include "daemon/wake_socket.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

#include "core/wake_path.h"

namespace room_outbox::relay {
namespace {

std::string SystemError(const std::string& call, int err) {
  return call + ": " + std::strerror(err);
}

sockaddr_un Address(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.data(), path.size());  // Check() bounded the size
  return addr;
}

const char* KindOf(mode_t mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISFIFO(mode)) return "a FIFO";
  return "a device or other special file";
}

// True when a process is bound to the socket file at `path` (a datagram sent there would be
// received); false when the file is left over (nobody bound: ECONNREFUSED).
core::Result<bool> SomeoneBound(const std::string& path) {
  core::Fd probe(::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (!probe) {
    return core::Fail(ErrorCode::kInternal, SystemError("socket(AF_UNIX, SOCK_DGRAM)", errno));
  }
  const sockaddr_un addr = Address(path);
  if (::connect(probe.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) == 0) {
    return true;
  }
  const int err = errno;
  if (err == ECONNREFUSED) {
    return false;
  }
  if (err == EPROTOTYPE) {
    return true;  // a live socket of another type (a stream socket)
  }
  return core::Fail(
      ErrorCode::kUnavailable,
      SystemError("connect(" + path + ") to see whether the socket there is in use", err));
}

// Makes room for the bind: removes a socket file nobody is bound to, refuses anything else.
core::Result<void> ClearStale(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    const int err = errno;
    if (err == ENOENT) return {};
    return core::Fail(ErrorCode::kUnavailable, SystemError("lstat(" + path + ")", err));
  }
  if (!S_ISSOCK(st.st_mode)) {
    return core::Fail(ErrorCode::kInvalidArgument,
                      "wake socket " + path + " exists and is " + KindOf(st.st_mode) +
                          ", not a socket; not removed: remove it or set another [wake] socket");
  }
  auto bound = SomeoneBound(path);
  if (!bound) return core::Fail(bound.error());
  if (*bound) {
    return core::Fail(ErrorCode::kAlreadyExists,
                      "wake socket " + path +
                          " is bound by a running process (another outbox-relay with the same "
                          "[wake] socket?); not replaced");
  }
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    return core::Fail(ErrorCode::kUnavailable,
                      SystemError("unlink(" + path + ") of a stale wake socket", errno));
  }
  return {};
}

}  // namespace

WakeSocket::WakeSocket(std::string path, core::Fd fd, dev_t dev, ino_t ino)
    : path_(std::move(path)), fd_(std::move(fd)), dev_(dev), ino_(ino) {}

core::Result<std::unique_ptr<WakeSocket>> WakeSocket::Bind(const std::string& path, mode_t mode) {
  if (path.empty()) {
    return core::Fail(ErrorCode::kInvalidArgument, "wake socket path is empty");
  }
  if (std::string why = core::CheckWakeSocketPath(path); !why.empty()) {
    return core::Fail(ErrorCode::kInvalidArgument, why);
  }
  if (auto cleared = ClearStale(path); !cleared) {
    return core::Fail(cleared.error());
  }
  core::Fd fd(::socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd) {
    return core::Fail(ErrorCode::kInternal, SystemError("socket(AF_UNIX, SOCK_DGRAM)", errno));
  }
  const sockaddr_un addr = Address(path);
  if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0) {
    return core::Fail(ErrorCode::kUnavailable, SystemError("bind(" + path + ")", errno));
  }
  // From here on the file is ours: a failure removes it again.
  struct stat st {};
  std::string failed;
  if (::chmod(path.c_str(), mode & 0777) != 0) {
    char octal[8];
    std::snprintf(octal, sizeof(octal), "%04o", static_cast<unsigned>(mode & 0777));
    failed = "chmod(" + path + ", " + octal + ")";
  } else if (::lstat(path.c_str(), &st) != 0) {
    failed = "lstat(" + path + ")";
  }
  if (!failed.empty()) {
    const int err = errno;
    (void)::unlink(path.c_str());  // best effort; the error below is what matters
    return core::Fail(ErrorCode::kUnavailable, SystemError(failed, err));
  }
  return std::unique_ptr<WakeSocket>(new WakeSocket(path, std::move(fd), st.st_dev, st.st_ino));
}

WakeSocket::~WakeSocket() {
  struct stat st {};
  if (::lstat(path_.c_str(), &st) == 0 && st.st_dev == dev_ && st.st_ino == ino_) {
    (void)::unlink(path_.c_str());  // nothing to do about a failure at exit
  }
}

size_t WakeSocket::Drain(size_t max_datagrams) {
  size_t read = 0;
  char buffer[64];
  while (read < max_datagrams) {
    const ssize_t n = ::recv(fd_.get(), buffer, sizeof(buffer), MSG_DONTWAIT);
    if (n >= 0) {
      ++read;  // any datagram, even an empty or long one (truncated), is one wake-up
      continue;
    }
    if (errno != EINTR) {
      break;  // EAGAIN: the queue is empty
    }
  }
  return read;
}

}  // namespace room_outbox::relay
