// WakeListener: a thread that waits on a WakeSocket and tells the worker rows were left for it.
// Each time datagrams arrive it drains every one queued and calls `on_wake` once with how many
// it read: a burst of commits becomes one wake-up. Then it reads nothing for `pace` ([wake]
// min_interval, the least gap between two rounds wake-ups start): a flood of datagrams costs the
// thread one read per pace, not one per datagram. Meanwhile datagrams queue in the socket, and
// once its queue is full (net.unix.max_dgram_qlen) a sender's datagram is refused; nothing is
// lost: that sender's rows were committed before its send, and the datagrams queued before it
// are read after it, so the wake-up they make comes after those rows.
//
// Thread-safety: `on_wake` runs on the listener's thread. The destructor stops and joins the
// thread, then closes the socket and removes its file (WakeSocket).
#pragma once

#include <chrono>
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

  // Starts listening on `socket`, reading at most once per `pace` (> 0). `logger` (which must
  // outlive the listener) gets one error line should waiting on the socket ever fail; the worker
  // then finds rows at its poll_interval.
  static core::Result<std::unique_ptr<WakeListener>> Start(std::unique_ptr<WakeSocket> socket,
                                                           OnWake on_wake, Logger& logger,
                                                           std::chrono::milliseconds pace);
  ~WakeListener();
  WakeListener(const WakeListener&) = delete;
  WakeListener& operator=(const WakeListener&) = delete;

  const std::string& path() const { return socket_->path(); }

 private:
  WakeListener(std::unique_ptr<WakeSocket> socket, core::Fd stop, OnWake on_wake, Logger& logger,
               std::chrono::milliseconds pace);
  void Loop();
  // Waits `pace` unless the destructor asks the thread to end first (then true).
  bool Pause();

  std::unique_ptr<WakeSocket> socket_;
  core::Fd stop_;  // an eventfd the destructor writes to end the thread's poll()
  OnWake on_wake_;
  Logger& logger_;
  std::chrono::milliseconds pace_;
  std::thread thread_;
};

}  // namespace room_outbox::relay
