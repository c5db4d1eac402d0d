// TcpProxy: a loopback TCP front for the test MariaDB (which listens on a unix socket only), so a
// client can be given host 127.0.0.1 and port() and have its connection broken on cue.
//
// Each accepted TCP connection gets its own upstream unix-socket connection and a thread that
// pumps bytes both ways. Bytes from the server pass untouched. Bytes from the client are cut
// into MySQL protocol packets (3-byte little-endian length, 1-byte sequence id, payload), which
// is enough to recognise a COM_QUERY (payload byte 0x03) carrying the text "COMMIT".
//
// Faults, one-shot, on the `nth` client COM_QUERY "COMMIT" (of any connection) counted from the
// call that arms them (1: the next one):
//   DropReplyToCommit(nth)   the COMMIT is forwarded to the server in full, then both sides of
//                            that connection are closed before anything more is read from the
//                            server: the server commits, the client never sees the answer (it
//                            reads EOF: "Lost connection to server during query");
//   DropCommit(nth)          both sides are closed instead of forwarding it: the server rolls
//                            the transaction back, the client sees the same EOF.
//   BeforeCommit(nth, f)     runs f() on the connection's thread when that COMMIT has arrived,
//                            before it is forwarded or dropped (e.g. to turn the server
//                            read-only under it); combines with a fault armed for the same one.
// RefuseConnections(true) closes every new connection at once (the server looks unreachable)
// until RefuseConnections(false). SetUpstream(socket) sends the connections accepted from then on
// to another server (a failover that keeps the address and changes the server); open
// connections stay where they are.
//
// Listens on 127.0.0.1 only, on a port the kernel picks. The destructor closes every connection
// and joins every thread. Thread-safe: the fault can be armed from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
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

  void DropReplyToCommit(int nth) { Arm(Fault::kDropReply, nth); }
  void DropCommit(int nth) { Arm(Fault::kDropCommit, nth); }
  void DropReplyToNextCommit() { DropReplyToCommit(1); }
  void DropNextCommit() { DropCommit(1); }
  void BeforeCommit(int nth, std::function<void()> action);
  void RefuseConnections(bool refuse) { refuse_.store(refuse); }
  void SetUpstream(std::string upstream_socket);
  // COMMITs whose connection was cut by a fault so far.
  int commits_dropped() const { return commits_dropped_.load(); }
  // Client COMMITs seen so far (forwarded or dropped).
  int commits_seen() const;
  // Connections accepted so far.
  int connections() const { return connections_.load(); }

 private:
  enum class Fault { kNone, kDropReply, kDropCommit };
  void Arm(Fault fault, int nth);
  // Counts a COMMIT seen, runs the action armed for it and returns the fault armed for it.
  Fault OnCommit();
  std::string Upstream() const;
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
  mutable std::mutex commit_mu_;  // guards the COMMIT count, the armed fault and action, upstream_
  int commits_seen_ = 0;
  Fault fault_ = Fault::kNone;
  int fault_at_ = 0;  // the commits_seen_ value of the COMMIT the fault is for
  std::function<void()> before_;
  int before_at_ = 0;
  std::atomic<bool> refuse_{false};
  std::atomic<int> commits_dropped_{0};
  std::atomic<int> connections_{0};
  std::mutex mu_;
  std::vector<std::thread> threads_;  // guarded by mu_
  std::thread acceptor_;
};

}  // namespace room_outbox::testing
