// SIGTERM/SIGINT (and SIGHUP) handling for the daemon without async-signal-safety puzzles: the
// signals are blocked in every thread and a dedicated thread receives them with sigtimedwait(),
// then calls an ordinary function (which may log, notify systemd and request a stop, or reload).
// With a reload handler, SIGHUP never stops the process: it only calls that handler (on the
// watcher thread; a slow reload delays the next signal, never the worker).
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <thread>

#include "core/result.h"

namespace room_outbox::relay {

class SignalWatcher {
 public:
  // `signal` is SIGTERM or SIGINT; `count` is 1 for the first signal received, 2 for the next...
  using Handler = std::function<void(int signal, int count)>;
  // Called for each SIGHUP.
  using ReloadHandler = std::function<void()>;

  // Blocks SIGTERM and SIGINT in the calling thread and starts the watching thread. Call it from
  // main() before any other thread starts, so that every later thread inherits the mask and no
  // signal is delivered to a thread that would die of its default action.
  // With `on_reload`, SIGHUP is blocked and received too (count is not advanced by it); without,
  // SIGHUP keeps its default action.
  static core::Result<std::unique_ptr<SignalWatcher>> Start(Handler handler,
                                                            ReloadHandler on_reload = {});

  // Stops and joins the watching thread (within its poll period, 200ms). The signals stay
  // blocked: a signal arriving during the final cleanup does not cut it short.
  ~SignalWatcher();
  SignalWatcher(const SignalWatcher&) = delete;
  SignalWatcher& operator=(const SignalWatcher&) = delete;

 private:
  SignalWatcher(Handler handler, ReloadHandler on_reload);
  void Loop();

  Handler handler_;
  ReloadHandler on_reload_;
  std::atomic<bool> done_{false};
  std::thread thread_;
};

}  // namespace room_outbox::relay
