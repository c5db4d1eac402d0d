// The daemon's view of a read-only database: a failover that keeps the address but lands on a
// server that refuses writes for a while (read_only = ON: errors 1290, 1836, 1792; see
// core/mysql/mysql_error.h). The store drops the connection after each refusal and the worker
// backs off as for any database error; this says what is happening.
//
//   ReadOnlyWatch   fed the outcome of every claim and mark of the worker's stores. A refusal
//                   starts an episode: one warn line "database is read-only: nothing is claimed
//                   or marked until it accepts writes" with the server's error, and
//                   Metrics::SetDbReadOnly (room_outbox_db_read_only 1, /readyz 503 naming the
//                   refusal). A claim or mark that goes through ends it: one info line "database
//                   accepts writes again" (read_only_ms, refusals) and the gauge back to 0. Any
//                   other failure clears the gauge (the database is then away: db_up and /readyz
//                   say "database unreachable") but not the episode, so a server that comes back
//                   read-only again is not logged twice.
//   ReadOnlyWatchedStore  a RelayStore that reports each claim and mark of the wrapped store to
//                   a ReadOnlyWatch and returns its result unchanged (reads are not reported).
//
// Thread-safety: ReadOnlyWatch may be fed from any thread (the worker and its claim ahead).
#pragma once

#include <cstdint>
#include <mutex>
#include <span>
#include <string>

#include "core/clock.h"
#include "core/result.h"
#include "store/relay_store.h"
#include "telemetry/log_line.h"
#include "telemetry/metrics.h"

namespace room_outbox::relay {

class ReadOnlyWatch {
 public:
  // `metrics`, `logger` and `clock` (its SteadyMs times an episode) must outlive the watch.
  ReadOnlyWatch(Metrics& metrics, Logger& logger, core::Clock& clock, std::string node_id)
      : metrics_(metrics), logger_(logger), clock_(clock), node_id_(std::move(node_id)) {}
  ReadOnlyWatch(const ReadOnlyWatch&) = delete;
  ReadOnlyWatch& operator=(const ReadOnlyWatch&) = delete;

  // A claim or mark ended: nullptr when it worked, else its error.
  void Observe(const Error* error);

  bool in_episode() const;

 private:
  LogLine Line(const char* message) const;

  Metrics& metrics_;
  Logger& logger_;
  core::Clock& clock_;
  const std::string node_id_;
  mutable std::mutex mu_;
  bool in_episode_ = false;  // guarded by mu_
  int64_t started_ms_ = 0;   // guarded by mu_
  uint64_t refusals_ = 0;    // guarded by mu_: refusals seen in this episode
};

class ReadOnlyWatchedStore final : public RelayStore {
 public:
  // `inner` and `watch` must outlive the store.
  ReadOnlyWatchedStore(RelayStore& inner, ReadOnlyWatch& watch) : inner_(inner), watch_(watch) {}

  core::Result<Claim> ClaimDue(const ClaimOptions& options) override {
    return Reported(inner_.ClaimDue(options));
  }
  core::Result<bool> AnyDue(bool per_room_order) override { return inner_.AnyDue(per_room_order); }
  core::Result<size_t> MarkPublished(const std::string& token, std::span<const int64_t> ids,
                                     std::span<const AttemptNote> notes) override {
    return Reported(inner_.MarkPublished(token, ids, notes));
  }
  core::Result<size_t> MarkFailed(const std::string& token,
                                  std::span<const FailedAttempt> attempts) override {
    return Reported(inner_.MarkFailed(token, attempts));
  }
  core::Result<size_t> MarkParked(const std::string& token,
                                  std::span<const FailedAttempt> attempts) override {
    return Reported(inner_.MarkParked(token, attempts));
  }
  core::Result<size_t> Release(const std::string& token, std::span<const int64_t> ids) override {
    return Reported(inner_.Release(token, ids));
  }
  core::Result<OutboxStats> Stats() override { return inner_.Stats(); }

 private:
  template <class T>
  core::Result<T> Reported(core::Result<T> result) {
    watch_.Observe(result ? nullptr : &result.error());
    return result;
  }

  RelayStore& inner_;
  ReadOnlyWatch& watch_;
};

}  // namespace room_outbox::relay
