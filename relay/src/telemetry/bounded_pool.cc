#include "telemetry/bounded_pool.h"

#include <pthread.h>
#include <signal.h>

#include <memory>
#include <utility>

namespace room_outbox::relay {

BoundedPool::BoundedPool(size_t workers, int listen_port,
                         std::chrono::milliseconds connection_deadline,
                         std::function<void()> on_cut)
    : deadlines_(listen_port, connection_deadline, std::move(on_cut)) {
  threads_.reserve(workers);
  for (size_t i = 0; i < workers; ++i) threads_.emplace_back([this] { Work(); });
}

BoundedPool::~BoundedPool() { shutdown(); }

void BoundedPool::enqueue(std::function<void()> fn) {
  // Right after accept(), on the accept thread: `fn` serves the connection adopted here. The
  // job owns it, so its watch ends with the job (run, or dropped unrun).
  std::shared_ptr<ConnectionDeadlines::Connection> connection = deadlines_.Adopt();
  auto job = [connection, fn = std::move(fn)] {
    if (connection) connection->StartServing();
    fn();
  };
  std::unique_lock<std::mutex> lock(mu_);
  // A job queued but not yet taken has an idle worker reserved for it.
  worker_idle_.wait(lock, [this] { return stopping_ || idle_ > jobs_.size(); });
  jobs_.push_back(std::move(job));
  job_ready_.notify_one();
}

void BoundedPool::shutdown() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  job_ready_.notify_all();
  worker_idle_.notify_all();
  for (auto& thread : threads_) {
    if (thread.joinable()) thread.join();
  }
}

void BoundedPool::Work() {
  sigset_t sigpipe;
  sigemptyset(&sigpipe);
  sigaddset(&sigpipe, SIGPIPE);
  (void)pthread_sigmask(SIG_BLOCK, &sigpipe, nullptr);
  for (;;) {
    std::function<void()> job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      ++idle_;
      worker_idle_.notify_one();
      job_ready_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
      --idle_;
      if (jobs_.empty()) return;  // stopping, nothing left to run
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    job();  // then destroyed, ending its connection's watch
  }
}

}  // namespace room_outbox::relay
