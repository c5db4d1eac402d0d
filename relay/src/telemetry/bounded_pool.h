// The metrics listener's connection workers: a fixed number of threads, and no queue behind them.
// enqueue() (called by cpp-httplib's accept thread with one accepted connection) waits while
// every worker is busy, so the listener holds at most `workers` connections plus the one being
// handed over; later ones wait in the kernel's listen backlog (and past it are refused by the
// kernel) instead of piling up as open descriptors in a queue.
//
// Each connection is served under an overall deadline (ConnectionDeadlines) that runs from the
// moment a worker takes it: past it the connection is shut down, so no client holds a worker
// longer, however it paces its request or its reading of the answer. A write to a connection
// shut down fails with EPIPE: the workers block SIGPIPE, so it never ends the process.
//
// Thread-safety: enqueue() is called by the listener's one accept thread (it finds the connection
// just accepted, ConnectionDeadlines::Adopt); shutdown() may be called from any thread and joins
// the workers after the jobs already handed over have run.
#pragma once

#include <httplib.h>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "telemetry/connection_deadlines.h"

namespace room_outbox::relay {

class BoundedPool final : public httplib::TaskQueue {
 public:
  // `listen_port`: the port the listener is bound to. `on_cut`: called for each connection shut
  // down at `connection_deadline` (ConnectionDeadlines' contract).
  BoundedPool(size_t workers, int listen_port, std::chrono::milliseconds connection_deadline,
              std::function<void()> on_cut);
  ~BoundedPool() override;
  BoundedPool(const BoundedPool&) = delete;
  BoundedPool& operator=(const BoundedPool&) = delete;

  // Hands `fn` to an idle worker, waiting for one to become idle.
  void enqueue(std::function<void()> fn) override;
  void shutdown() override;

 private:
  void Work();

  ConnectionDeadlines deadlines_;  // first: outlives every job, run or left in jobs_
  std::mutex mu_;
  std::condition_variable job_ready_;    // a job was queued, or shutdown
  std::condition_variable worker_idle_;  // a worker is waiting for a job
  std::deque<std::function<void()>> jobs_;
  size_t idle_ = 0;  // workers waiting for a job
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace room_outbox::relay
