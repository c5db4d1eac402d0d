#include "telemetry/accepted_socket.h"

#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <cstdlib>
#include <memory>

namespace room_outbox::relay {
namespace {

// The inode of `fd` when it is a socket; 0 otherwise.
ino_t SocketInode(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode)) return 0;
  return st.st_ino;
}

int IntOption(int fd, int name) {
  int value = -1;
  socklen_t len = sizeof(value);
  if (::getsockopt(fd, SOL_SOCKET, name, &value, &len) != 0) return -1;
  return value;
}

// A connected TCP socket whose local port is `port`: a connection accepted on that port.
bool AcceptedOnPort(int fd, int port) {
  if (IntOption(fd, SO_TYPE) != SOCK_STREAM || IntOption(fd, SO_ACCEPTCONN) != 0) return false;
  sockaddr_storage local{};
  socklen_t len = sizeof(local);
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len) != 0) return false;
  int local_port = -1;
  if (local.ss_family == AF_INET) {
    local_port = ntohs(reinterpret_cast<const sockaddr_in*>(&local)->sin_port);
  } else if (local.ss_family == AF_INET6) {
    local_port = ntohs(reinterpret_cast<const sockaddr_in6*>(&local)->sin6_port);
  }
  sockaddr_storage peer{};
  len = sizeof(peer);
  return local_port == port && ::getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &len) == 0;
}

struct DirCloser {
  void operator()(DIR* dir) const { (void)::closedir(dir); }
};

}  // namespace

std::optional<AcceptedSocket> FindNewAcceptedSocket(int listen_port, const std::set<ino_t>& known) {
  std::unique_ptr<DIR, DirCloser> dir(::opendir("/proc/self/fd"));
  if (!dir) return std::nullopt;
  int found = -1;
  ino_t found_inode = 0;
  while (const dirent* entry = ::readdir(dir.get())) {
    char* end = nullptr;
    const long fd = std::strtol(entry->d_name, &end, 10);
    if (end == entry->d_name || *end != '\0' || fd == ::dirfd(dir.get())) continue;
    const ino_t inode = SocketInode(static_cast<int>(fd));
    if (inode == 0 || known.count(inode) != 0 || !AcceptedOnPort(static_cast<int>(fd), listen_port)) {
      continue;
    }
    if (found >= 0) return std::nullopt;  // two candidates: neither is known to be the new one
    found = static_cast<int>(fd);
    found_inode = inode;
  }
  if (found < 0) return std::nullopt;
  // The number may have been closed and reused since it was read: the duplicate must be the
  // socket that was found.
  AcceptedSocket accepted{core::Fd(::fcntl(found, F_DUPFD_CLOEXEC, 0)), found_inode};
  if (!accepted.socket || SocketInode(accepted.socket.get()) != found_inode) return std::nullopt;
  return accepted;
}

}  // namespace room_outbox::relay
