#include "wake_sender.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <utility>

namespace room_outbox {

WakeSender::WakeSender(std::string path) : path_(std::move(path)) {
  if (!path_.empty() && Check(path_).empty()) {
    fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  }
}

WakeSender::~WakeSender() {
  if (fd_ >= 0) ::close(fd_);
}

std::string WakeSender::Check(std::string_view path) {
  if (path.empty()) return "";
  if (path.find('\0') != std::string_view::npos) return "wake socket path holds a NUL byte";
  if (path.front() != '/')
    return "wake socket path must be absolute: \"" + std::string(path) + "\"";
  if (path.size() >= sizeof(sockaddr_un{}.sun_path)) {
    return "wake socket path is " + std::to_string(path.size()) +
           " bytes; a unix socket path holds at most " +
           std::to_string(sizeof(sockaddr_un{}.sun_path) - 1);
  }
  return "";
}

void WakeSender::Notify() noexcept {
  if (fd_ < 0) {
    if (!path_.empty()) refused_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path_.data(), path_.size());
  const char byte = 'w';
  const ssize_t n = ::sendto(fd_, &byte, 1, MSG_DONTWAIT | MSG_NOSIGNAL,
                             reinterpret_cast<const sockaddr*>(&addr), sizeof(addr));
  if (n == 1) {
    sent_.fetch_add(1, std::memory_order_relaxed);
  } else {
    refused_.fetch_add(1, std::memory_order_relaxed);
  }
}

}  // namespace room_outbox
