#include "support/wake_sink.h"

#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <cstring>
#include <filesystem>
#include <system_error>

namespace room_outbox::testing {

WakeSink::WakeSink() {
  char tmpl[] = "/tmp/wake-sink-XXXXXX";
  if (mkdtemp(tmpl) == nullptr) return;
  dir_ = tmpl;
  path_ = dir_ + "/wake.sock";
  fd_ = core::Fd(::socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path_.size() >= sizeof addr.sun_path) return;
  std::memcpy(addr.sun_path, path_.data(), path_.size());
  bound_ = fd_ && ::bind(fd_.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0;
}

WakeSink::~WakeSink() {
  if (dir_.empty()) return;
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

size_t WakeSink::Drain() {
  size_t n = 0;
  char buf[16];
  while (::recv(fd_.get(), buf, sizeof buf, MSG_DONTWAIT) > 0) ++n;
  return n;
}

}  // namespace room_outbox::testing
