// WakeSender: the hook's side of `[wake] socket`. When a commit leaves rows for outbox-relay
// (the sync publish is off, failed, skipped or ran out of time), the hook sends one datagram to
// the relay's unix datagram socket so the relay starts a round at once instead of at its next
// poll. Best effort by design: the send never blocks and never fails a command; a missing,
// unbound or full socket only means the relay finds the rows at its next poll.
//
// Thread-safety: Notify() may be called from several threads at once (one datagram socket,
// sendto is atomic per datagram).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/fd.h"

namespace room_outbox::internal {

class WakeSender {
 public:
  // An empty path (or one CheckWakeSocketPath refuses): Notify() does nothing. The socket is
  // opened here.
  explicit WakeSender(std::string path);
  WakeSender(const WakeSender&) = delete;
  WakeSender& operator=(const WakeSender&) = delete;

  bool enabled() const { return !path_.empty(); }
  const std::string& path() const { return path_; }

  // Sends one wake-up datagram, non-blocking. Never throws, never waits.
  void Notify() noexcept;

  // Datagrams sent / refused by the kernel (no socket bound there, its queue full, ...).
  uint64_t sent() const { return sent_.load(std::memory_order_relaxed); }
  uint64_t refused() const { return refused_.load(std::memory_order_relaxed); }

 private:
  std::string path_;
  core::Fd fd_;
  std::atomic<uint64_t> sent_{0};
  std::atomic<uint64_t> refused_{0};
};

}  // namespace room_outbox::internal
