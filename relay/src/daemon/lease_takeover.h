// LeaseTakeover: the relay daemon's thread that keeps its run findable and takes back the leases
// of relays proven gone, whatever node_id they ran under: a relay killed in a pod that comes back
// under another name costs its rooms seconds, not the rest of its leases. Every
// kRelayRunBeatInterval, on a connection of its own (store/relay_runs.h):
//   1. NodeLock::Hold(): the node lock is held again within a beat after its connection was lost
//      (a database restart or failover), whatever poll_interval is;
//   2. the run's row in room_outbox_relay_run is beaten (written again if a relay deleted it);
//   3. once this process has held its lock for kRelayGoneAfter without a break, the runs whose
//      node lock is free and whose beat is older than kRelayGoneAfter are gone: their leases are
//      given back (due at once, retry_count and last_error kept; room_outbox_leases_taken_over_total
//      counts them) and their rows deleted. One pass gives back at most kGoneRunsPerPass runs.
//
// A live relay's leases are never taken: its lock is held while its lock connection lives. When
// that connection is lost the relay takes the lock again within a beat and keeps beating, so both
// waits protect it: the beat's age when its connection alone was lost, this relay's own time
// since its lock was (re)taken when the server lost every lock at once (a restart or a failover
// to a server that never held them).
//
// The destructor stops and joins the thread; a statement under way ends within the connection's
// socket timeouts.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <thread>

#include "config/config.h"
#include "core/clock.h"
#include "core/mysql/connection.h"
#include "core/wipe.h"
#include "store/node_lock.h"
#include "telemetry/log_line.h"
#include "telemetry/metrics.h"
#include "worker/loop_clock.h"

namespace room_outbox::relay {

// How often a run beats its row and looks for relays gone.
inline constexpr std::chrono::milliseconds kRelayRunBeatInterval{500};
// How long a run's lock must be free and its beat old before it counts as gone; also how long
// this relay must have held its own lock before it gives anyone's leases back. Four beats: a live
// relay whose lock connection was lost has taken the lock again long before.
inline constexpr std::chrono::milliseconds kRelayGoneAfter{2000};
// The most gone runs one pass gives back (more wait for the next pass).
inline constexpr int64_t kGoneRunsPerPass = 16;

class LeaseTakeover {
 public:
  // Starts the thread. `lock`, `metrics`, `logger` and `clock` must outlive the result.
  // `on_taken` is called when a beat took the lock (after its connection was lost).
  static std::unique_ptr<LeaseTakeover> Start(const Config& config, NodeLock& lock,
                                              std::function<void(const NodeLockHold&)> on_taken,
                                              Metrics& metrics, Logger& logger,
                                              core::Clock& clock);
  ~LeaseTakeover();
  LeaseTakeover(const LeaseTakeover&) = delete;
  LeaseTakeover& operator=(const LeaseTakeover&) = delete;

 private:
  LeaseTakeover(const Config& config, NodeLock& lock,
                std::function<void(const NodeLockHold&)> on_taken, Metrics& metrics,
                Logger& logger, core::Clock& clock);
  void Loop();
  // One beat and, when this relay may, one give-back; an error ends the pass.
  [[nodiscard]] core::Result<void> Pass();
  // Whether this process has held its lock for kRelayGoneAfter without a break.
  [[nodiscard]] core::Result<bool> HeldLongEnough();
  [[nodiscard]] core::Result<void> GiveBackGoneRuns();
  void Report(const core::Result<void>& pass);

  const Config& config_;
  core::SecretOwner<MysqlOptions> mysql_;
  NodeLock& lock_;
  std::function<void(const NodeLockHold&)> on_taken_;
  Metrics& metrics_;
  Logger& logger_;
  core::Clock& clock_;
  std::unique_ptr<core::MariaDbConnection> conn_;
  uint64_t takes_seen_ = 0;
  std::optional<int64_t> held_since_ms_;  // steady clock: since when the lock is held unbroken
  bool failing_ = false;
  LoopSignal stop_;
  std::thread thread_;
};

}  // namespace room_outbox::relay
