// The metrics listener's connection workers: a fixed number of threads, and no queue behind them.
// enqueue() (called by cpp-httplib's accept thread with one accepted connection) waits while
// every worker is busy, so the listener holds at most `workers` connections plus the one being
// handed over; later ones wait in the kernel's listen backlog (and past it are refused by the
// kernel) instead of piling up as open descriptors in a queue.
//
// Thread-safety: enqueue() and shutdown() may be called from any thread; shutdown() joins the
// workers after the jobs already handed over have run.
#pragma once

#include <httplib.h>

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace room_outbox::relay {

class BoundedPool final : public httplib::TaskQueue {
 public:
  explicit BoundedPool(size_t workers);
  ~BoundedPool() override;
  BoundedPool(const BoundedPool&) = delete;
  BoundedPool& operator=(const BoundedPool&) = delete;

  // Hands `fn` to an idle worker, waiting for one to become idle.
  void enqueue(std::function<void()> fn) override;
  void shutdown() override;

 private:
  void Work();

  std::mutex mu_;
  std::condition_variable job_ready_;    // a job was queued, or shutdown
  std::condition_variable worker_idle_;  // a worker is waiting for a job
  std::deque<std::function<void()>> jobs_;
  size_t idle_ = 0;  // workers waiting for a job
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace room_outbox::relay
