#include "telemetry/connection_deadlines.h"

#include <sys/socket.h>

#include <algorithm>
#include <set>
#include <utility>

#include "telemetry/accepted_socket.h"

namespace room_outbox::relay {

ConnectionDeadlines::ConnectionDeadlines(int listen_port, std::chrono::milliseconds deadline,
                                         std::function<void()> on_cut)
    : listen_port_(listen_port),
      deadline_(deadline),
      on_cut_(std::move(on_cut)),
      watcher_([this] { Watch(); }) {}

ConnectionDeadlines::~ConnectionDeadlines() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  changed_.notify_all();
  watcher_.join();
}

std::unique_ptr<ConnectionDeadlines::Connection> ConnectionDeadlines::Adopt() {
  std::lock_guard<std::mutex> lock(mu_);
  // Every accepted socket still open but the new one is watched: its job has not ended (the
  // duplicate is closed only after httplib closed its own descriptor).
  std::set<ino_t> known;
  for (const auto& [id, watched] : watched_) known.insert(watched.inode);
  std::optional<AcceptedSocket> accepted = FindNewAcceptedSocket(listen_port_, known);
  if (!accepted) return nullptr;
  const uint64_t id = next_id_++;
  watched_.emplace(id, Watched{std::move(accepted->socket), accepted->inode});
  return std::make_unique<Connection>(*this, id);
}

void ConnectionDeadlines::Start(uint64_t id) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = watched_.find(id);
    if (it == watched_.end()) return;
    it->second.deadline = Steady::now() + deadline_;
  }
  changed_.notify_all();
}

void ConnectionDeadlines::Release(uint64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  watched_.erase(id);  // closes the duplicate; a later deadline wakes the watcher for nothing
}

void ConnectionDeadlines::Watch() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    const Steady::time_point next = CutExpired(Steady::now());
    if (next == Steady::time_point::max()) {
      changed_.wait(lock);
    } else {
      changed_.wait_until(lock, next);
    }
  }
}

ConnectionDeadlines::Steady::time_point ConnectionDeadlines::CutExpired(Steady::time_point now) {
  Steady::time_point next = Steady::time_point::max();
  for (auto& [id, watched] : watched_) {
    if (watched.cut) continue;
    if (watched.deadline > now) {
      next = std::min(next, watched.deadline);
      continue;
    }
    watched.cut = true;
    on_cut_();
    // The duplicate is still open, so this is the connection's socket: httplib's poll and recv
    // (or send) on it return, and its job ends.
    (void)::shutdown(watched.socket.get(), SHUT_RDWR);
  }
  return next;
}

}  // namespace room_outbox::relay
