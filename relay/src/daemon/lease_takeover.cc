#include "daemon/lease_takeover.h"

#include <algorithm>
#include <utility>

#include "daemon/lifecycle_log.h"
#include "store/relay_runs.h"

namespace room_outbox::relay {

std::unique_ptr<LeaseTakeover> LeaseTakeover::Start(
    const Config& config, NodeLock& lock, std::function<void(const NodeLockHold&)> on_taken,
    Metrics& metrics, Logger& logger, core::Clock& clock) {
  std::unique_ptr<LeaseTakeover> takeover(
      new LeaseTakeover(config, lock, std::move(on_taken), metrics, logger, clock));
  takeover->thread_ = std::thread([t = takeover.get()] { t->Loop(); });
  return takeover;
}

LeaseTakeover::LeaseTakeover(const Config& config, NodeLock& lock,
                             std::function<void(const NodeLockHold&)> on_taken, Metrics& metrics,
                             Logger& logger, core::Clock& clock)
    : config_(config),
      mysql_(config.mysql),
      lock_(lock),
      on_taken_(std::move(on_taken)),
      metrics_(metrics),
      logger_(logger),
      clock_(clock) {
  // A short connect timeout: a pass must not hold up the shutdown for long.
  mysql_.connect_timeout = std::min(mysql_.connect_timeout, std::chrono::milliseconds(2000));
}

LeaseTakeover::~LeaseTakeover() {
  stop_.RequestStop();
  if (thread_.joinable()) thread_.join();
}

void LeaseTakeover::Loop() {
  while (!stop_.stop_requested()) {
    auto pass = Pass();
    if (!pass) conn_.reset();  // connect again on the next pass
    Report(pass);
    if (stop_.WaitFor(kRelayRunBeatInterval)) break;
  }
}

core::Result<void> LeaseTakeover::Pass() {
  auto held = HeldLongEnough();
  if (!held) return core::Fail(held.error());
  if (!conn_) {
    auto conn = core::MariaDbConnection::Connect(mysql_);
    if (!conn) return core::Fail(conn.error());
    if (auto prepared = (*conn)->PrepareNow(kRelayRunStatements); !prepared) {
      return core::Fail(prepared.error());
    }
    conn_ = std::move(*conn);
  }
  if (auto beat = BeatRun(*conn_, lock_.run()); !beat) return core::Fail(beat.error());
  if (!*held) return {};
  return GiveBackGoneRuns();
}

core::Result<bool> LeaseTakeover::HeldLongEnough() {
  auto held = lock_.Hold();
  if (!held) {
    held_since_ms_.reset();
    return core::Fail(held.error());
  }
  if (held->taken && on_taken_) on_taken_(*held);
  const int64_t now = clock_.SteadyMs();
  if (held->takes != takes_seen_ || !held_since_ms_) {
    // Taken again since the last pass (here or before a claim): held from now on, at the latest.
    takes_seen_ = held->takes;
    held_since_ms_ = now;
  }
  return now - *held_since_ms_ >= kRelayGoneAfter.count();
}

core::Result<void> LeaseTakeover::GiveBackGoneRuns() {
  auto gone = FindGoneRuns(*conn_, kRelayGoneAfter, kGoneRunsPerPass);
  if (!gone) return core::Fail(gone.error());
  for (const GoneRun& run : *gone) {
    if (run.token_prefix == lock_.token_prefix()) continue;  // never this run's own
    auto released = ReleaseRunLeases(*conn_, run.token_prefix);
    if (!released) return core::Fail(released.error());
    if (auto forgot = ForgetRun(*conn_, run.token_prefix); !forgot) {
      return core::Fail(forgot.error());
    }
    metrics_.AddLeasesTakenOver(*released);
    logger_.Info(Lifecycle("leases of a relay gone given back", config_)
                     .Add("gone_node_id", run.node_id)
                     .Add("gone_run", run.token_prefix)
                     .Add("beat_age_ms", run.beat_age_ms)
                     .Add("released", *released));
  }
  return {};
}

// A failing pass is logged when it starts failing and when it works again, not every beat.
void LeaseTakeover::Report(const core::Result<void>& pass) {
  if (!pass && !failing_) {
    logger_.Warn(Lifecycle("relay run beat failed; retrying every beat", config_)
                     .Add("error", pass.error().message));
  } else if (pass && failing_) {
    logger_.Info(Lifecycle("relay run beat works again", config_));
  }
  failing_ = !pass;
}

}  // namespace room_outbox::relay
