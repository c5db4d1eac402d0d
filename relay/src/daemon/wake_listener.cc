#include "daemon/wake_listener.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <utility>

namespace room_outbox::relay {

WakeListener::WakeListener(std::unique_ptr<WakeSocket> socket, core::Fd stop, OnWake on_wake,
                           Logger& logger, std::chrono::milliseconds pace)
    : socket_(std::move(socket)),
      stop_(std::move(stop)),
      on_wake_(std::move(on_wake)),
      logger_(logger),
      pace_(std::max(pace, std::chrono::milliseconds(1))) {}

core::Result<std::unique_ptr<WakeListener>> WakeListener::Start(std::unique_ptr<WakeSocket> socket,
                                                                OnWake on_wake, Logger& logger,
                                                                std::chrono::milliseconds pace) {
  core::Fd stop(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!stop) {
    return core::Fail(ErrorCode::kInternal, std::string("eventfd: ") + std::strerror(errno));
  }
  std::unique_ptr<WakeListener> listener(
      new WakeListener(std::move(socket), std::move(stop), std::move(on_wake), logger, pace));
  listener->thread_ = std::thread([l = listener.get()] { l->Loop(); });
  return listener;
}

WakeListener::~WakeListener() {
  const uint64_t one = 1;
  // Adding 1 to a fresh eventfd cannot fail; if it ever did, the thread would never leave poll()
  // and would outlive the socket it reads: fatal, explicitly.
  if (::write(stop_.get(), &one, sizeof(one)) != static_cast<ssize_t>(sizeof(one))) {
    logger_.Error(
        LogLine("cannot stop the wake listener thread").Add("error", std::strerror(errno)));
    std::abort();
  }
  if (thread_.joinable()) {
    thread_.join();
  }
}

void WakeListener::Loop() {
  pollfd fds[2] = {{socket_->fd(), POLLIN, 0}, {stop_.get(), POLLIN, 0}};
  while (true) {
    const int ready = ::poll(fds, 2, -1);
    if (ready < 0 && errno == EINTR) {
      continue;
    }
    const int err = errno;
    if (ready > 0 && fds[1].revents != 0) {
      return;  // the destructor asks the thread to end
    }
    const size_t read = ready > 0 ? socket_->Drain() : 0;
    if (read > 0) {
      on_wake_(read);
      if (Pause()) return;
      continue;
    }
    // Readable yet nothing to read only with an error on the socket (POLLERR, POLLNVAL).
    if (ready < 0 || (fds[0].revents & (POLLERR | POLLNVAL)) != 0) {
      logger_.Error(LogLine("wake socket unusable: wake-ups end; rows are found at poll_interval")
                        .Add("wake_socket", socket_->path())
                        .Add("error", ready < 0 ? std::strerror(err) : "socket error"));
      return;
    }
  }
}

bool WakeListener::Pause() {
  pollfd stop = {stop_.get(), POLLIN, 0};
  const auto deadline = std::chrono::steady_clock::now() + pace_;
  while (true) {
    const auto left =
        std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    const int ready = ::poll(&stop, 1, static_cast<int>(left.count()));
    if (ready > 0) return true;
    if (ready < 0 && errno != EINTR) return false;  // a pause cut short costs nothing
  }
}

}  // namespace room_outbox::relay
