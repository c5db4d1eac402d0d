// TcpProxy: a loopback TCP front for the test MariaDB (which listens on a unix socket only), so a
// client can be given host 127.0.0.1 and port() and have its connection broken on cue.
//
// Each accepted TCP connection gets its own upstream unix-socket connection and a thread that
// pumps bytes both ways. Bytes from the server pass untouched. Bytes from the client are cut
// into MySQL protocol packets (3-byte little-endian length, 1-byte sequence id, payload), which
// is enough to recognise a COM_QUERY (payload byte 0x03) carrying the text "COMMIT".
//
// Faults, one-shot, on the next client COM_QUERY "COMMIT" of any connection:
//   DropReplyToNextCommit()  the COMMIT is forwarded to the server in full, then both sides of
//                            that connection are closed before anything more is read from the
//                            server: the server commits, the client never sees the answer (it
//                            reads EOF: "Lost connection to server during query");
//   DropNextCommit()         both sides are closed instead of forwarding it: the server rolls
//                            the transaction back, the client sees the same EOF.
// RefuseConnections(true) closes every new connection at once (the server looks unreachable)
// until RefuseConnections(false).
//
// Listens on 127.0.0.1 only, on a port the kernel picks. The destructor closes every connection
// and joins every thread. Thread-safe: the fault can be armed from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/fd.h"

namespace room_outbox::testing {

class TcpProxy {
 public:
  explicit TcpProxy(std::string upstream_socket);
  ~TcpProxy();
  TcpProxy(const TcpProxy&) = delete;
  TcpProxy& operator=(const TcpProxy&) = delete;

  bool running() const { return static_cast<bool>(listen_); }
  const std::string& start_error() const { return start_error_; }
  uint16_t port() const { return port_; }

  void DropReplyToNextCommit() { fault_.store(Fault::kDropReply); }
  void DropNextCommit() { fault_.store(Fault::kDropCommit); }
  void RefuseConnections(bool refuse) { refuse_.store(refuse); }
  // COMMITs whose connection was cut by a fault so far.
  int commits_dropped() const { return commits_dropped_.load(); }
  // Connections accepted so far.
  int connections() const { return connections_.load(); }

 private:
  void AcceptLoop();
  void Pump(core::Fd client);
  // Forwards the complete packets at the front of `pending` to `server_fd`; false when the
  // connection must end (a write failed or a COMMIT fault fired).
  bool ForwardClientPackets(std::string& pending, int server_fd);

  std::string upstream_;
  std::string start_error_;
  core::Fd listen_;
  // A pipe: closing the write end wakes every poll() on the read end.
  core::Fd stop_read_;
  core::Fd stop_write_;
  uint16_t port_ = 0;
  enum class Fault { kNone, kDropReply, kDropCommit };
  std::atomic<Fault> fault_{Fault::kNone};
  std::atomic<bool> refuse_{false};
  std::atomic<int> commits_dropped_{0};
  std::atomic<int> connections_{0};
  std::mutex mu_;
  std::vector<std::thread> threads_;  // guarded by mu_
  std::thread acceptor_;
};

}  // namespace room_outbox::testing
