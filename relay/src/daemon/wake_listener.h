// WakeListener: a thread that waits on a WakeSocket and tells the worker rows were left for it.
// Each time datagrams arrive it drains every one queued (so the socket's queue, 10 datagrams by
// default on Linux, does not stay full and refuse senders) and calls `on_wake` once with how
// many it read: a burst of commits becomes one wake-up.
//
// Thread-safety: `on_wake` runs on the listener's thread. The destructor stops and joins the
// thread, then closes the socket and removes its file (WakeSocket).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <thread>

#include "core/fd.h"
#include "core/result.h"
#include "daemon/wake_socket.h"
#include "telemetry/log_line.h"

namespace room_outbox::relay {

class WakeListener {
 public:
  using OnWake = std::function<void(uint64_t datagrams)>;

  // Starts listening on `socket`. `logger` (which must outlive the listener) gets one error line
  // should waiting on the socket ever fail; the worker then finds rows at its poll_interval.
  static Result<std::unique_ptr<WakeListener>> Start(std::unique_ptr<WakeSocket> socket,
                                                     OnWake on_wake, Logger& logger);
  ~WakeListener();
  WakeListener(const WakeListener&) = delete;
  WakeListener& operator=(const WakeListener&) = delete;

  const std::string& path() const { return socket_->path(); }

 private:
  WakeListener(std::unique_ptr<WakeSocket> socket, Fd stop, OnWake on_wake, Logger& logger);
  void Loop();

  std::unique_ptr<WakeSocket> socket_;
  Fd stop_;  // an eventfd the destructor writes to end the thread's poll()
  OnWake on_wake_;
  Logger& logger_;
  std::thread thread_;
};

}  // namespace room_outbox::relay
