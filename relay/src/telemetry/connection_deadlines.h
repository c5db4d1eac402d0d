// The overall deadline of the metrics listener's connections: a connection still being served
// `deadline` after its worker took it is shut down (shutdown(SHUT_RDWR) on a duplicate of its
// descriptor), so cpp-httplib's blocked read or write returns and the worker is free again,
// whatever pace the client keeps within the per-read and per-write timeouts.
//
// The duplicate (AcceptedSocket) is held from the accept until the connection's job is over, so
// the number shut down is always this connection's socket, never a reused descriptor number.
//
// Thread-safety: Adopt() is called by the listener's one accept thread; Connection's methods and
// destructor from any thread. A watcher thread of the object's own cuts the connections; the
// destructor stops and joins it (no Connection may outlive the object).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "core/fd.h"

namespace room_outbox::relay {

class ConnectionDeadlines {
 public:
  // `listen_port`: the listener's port (its accepted sockets are found by it). `on_cut`: called
  // on the watcher thread, under its lock, before each connection is shut down; it must be
  // cheap and must not call back into this object.
  ConnectionDeadlines(int listen_port, std::chrono::milliseconds deadline,
                      std::function<void()> on_cut);
  ~ConnectionDeadlines();
  ConnectionDeadlines(const ConnectionDeadlines&) = delete;
  ConnectionDeadlines& operator=(const ConnectionDeadlines&) = delete;

  // One accepted connection, from its accept to the end of its job; its destruction ends the
  // watch and closes the duplicate.
  class Connection {
   public:
    Connection(ConnectionDeadlines& owner, uint64_t id) : owner_(owner), id_(id) {}
    ~Connection() { owner_.Release(id_); }
    Connection(const Connection&) = delete;
    Connection& operator=(const Connection&) = delete;
    // A worker serves the connection from now: its deadline runs from now.
    void StartServing() { owner_.Start(id_); }

   private:
    ConnectionDeadlines& owner_;
    uint64_t id_;
  };

  // The connection accepted last. Call on the accept thread after accept() and before the next
  // one. Null when it cannot be told apart (e.g. /proc is not mounted): it is then served
  // without an overall deadline.
  std::unique_ptr<Connection> Adopt();

 private:
  using Steady = std::chrono::steady_clock;
  struct Watched {
    core::Fd socket;  // the duplicate
    ino_t inode = 0;
    Steady::time_point deadline = Steady::time_point::max();  // max: not served yet
    bool cut = false;
  };

  void Start(uint64_t id);
  void Release(uint64_t id);
  void Watch();
  // Shuts down the connections past their deadline at `now`; the earliest deadline left.
  Steady::time_point CutExpired(Steady::time_point now);

  const int listen_port_;
  const std::chrono::milliseconds deadline_;
  const std::function<void()> on_cut_;
  std::mutex mu_;
  std::condition_variable changed_;  // a deadline was set, or stopping
  std::map<uint64_t, Watched> watched_;
  uint64_t next_id_ = 1;
  bool stopping_ = false;
  std::thread watcher_;  // last: started once everything it reads exists
};

}  // namespace room_outbox::relay
