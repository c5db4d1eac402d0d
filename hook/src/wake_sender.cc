#include "wake_sender.h"

#include <sys/socket.h>
#include <sys/un.h>

#include <cstring>
#include <string>
#include <utility>

#include "core/wake_path.h"

namespace room_outbox::internal {

WakeSender::WakeSender(std::string path) : path_(std::move(path)) {
  if (!path_.empty() && core::CheckWakeSocketPath(path_).empty()) {
    fd_ = core::Fd(::socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  }
}

void WakeSender::Notify() noexcept {
  if (!fd_) {
    if (!path_.empty()) refused_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path_.data(), path_.size());
  const char byte = 'w';
  const ssize_t n = ::sendto(fd_.get(), &byte, 1, MSG_DONTWAIT | MSG_NOSIGNAL,
                             reinterpret_cast<const sockaddr*>(&addr), sizeof(addr));
  if (n == 1) {
    sent_.fetch_add(1, std::memory_order_relaxed);
  } else {
    refused_.fetch_add(1, std::memory_order_relaxed);
  }
}

}  // namespace room_outbox::internal
