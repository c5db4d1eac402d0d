#include "daemon/signals.h"

#include <pthread.h>
#include <signal.h>

#include <cerrno>
#include <cstring>

namespace room_outbox::relay {
namespace {

sigset_t WatchedSignals(bool reload) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  if (reload) sigaddset(&set, SIGHUP);
  return set;
}

}  // namespace

SignalWatcher::SignalWatcher(Handler handler, ReloadHandler on_reload)
    : handler_(std::move(handler)), on_reload_(std::move(on_reload)) {}

core::Result<std::unique_ptr<SignalWatcher>> SignalWatcher::Start(Handler handler,
                                                                  ReloadHandler on_reload) {
  sigset_t set = WatchedSignals(static_cast<bool>(on_reload));
  const int rc = pthread_sigmask(SIG_BLOCK, &set, nullptr);
  if (rc != 0) {
    return core::Fail(ErrorCode::kInternal,
                      std::string("pthread_sigmask(SIG_BLOCK): ") + std::strerror(rc));
  }
  std::unique_ptr<SignalWatcher> watcher(
      new SignalWatcher(std::move(handler), std::move(on_reload)));
  watcher->thread_ = std::thread([w = watcher.get()] { w->Loop(); });
  return watcher;
}

SignalWatcher::~SignalWatcher() {
  done_.store(true, std::memory_order_release);
  if (thread_.joinable()) {
    thread_.join();
  }
}

void SignalWatcher::Loop() {
  const sigset_t set = WatchedSignals(static_cast<bool>(on_reload_));
  int count = 0;
  // A timed wait lets the destructor end the thread without sending it a signal.
  const timespec period{0, 200'000'000};
  while (!done_.load(std::memory_order_acquire)) {
    siginfo_t info{};
    const int sig = sigtimedwait(&set, &info, &period);
    if (sig < 0) {
      continue;  // EAGAIN (timeout) or EINTR
    }
    if (sig == SIGHUP) {
      on_reload_();
      continue;
    }
    ++count;
    handler_(sig, count);
  }
}

}  // namespace room_outbox::relay
