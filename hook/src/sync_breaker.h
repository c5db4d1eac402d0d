// SyncBreaker: the circuit breaker of the hook's sync publish.
//
// During an IM outage every command would otherwise pay sync_publish_timeout before its
// rows go to the relay anyway. After kFailuresToOpen (3) consecutive sync publishes that found
// IM failing (no answer, HTTP 5xx, an app-wide or global-rate error, the publisher's own
// breaker open) the breaker opens: for kCooldown (30 s) Commit does not try the sync publish at
// all and writes its rows due at once for the relay (DeliveryState::kPending, error "sync
// publish skipped: IM failing, breaker open"). After the cooldown exactly one commit is the
// probe: its sync publish runs as usual; success closes the breaker, failure opens it for
// another cooldown. Answers about the message itself (delivered, a room's frequency control, a
// bad group) prove IM works and reset the count; a timeout cut short by the command's own
// deadline proves nothing either way.
//
//   closed --3rd consecutive failure--> open --cooldown over, Admit--> half-open (one probe)
//   half-open --probe healthy--> closed;  --probe failing--> open;  --no request--> half-open
//
// Scope: process-wide. CreateHook gives every Hook of the process configured for the same IM
// endpoint and sdk_app_id the same breaker (ProcessSyncBreaker), so with one Hook per thread an
// outage costs the process 3 timeouts, not 3 per thread. Hooks built by MakeHook without one get
// a private breaker (unit tests).
//
// Pure logic over a monotonic millisecond value the caller passes; it never reads a clock.
// Thread-safe (an internal mutex).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "core/publisher.h"
#include "room_outbox/hook.h"

namespace room_outbox::internal {

class SyncBreaker {
 public:
  static constexpr int kFailuresToOpen = 3;
  static constexpr std::chrono::milliseconds kCooldown{30000};

  enum class Admission {
    kAllow,  // closed: publish
    kProbe,  // the cooldown is over: this commit's sync publish is the probe; Record it with
             // probe = true, or CancelProbe when it made no request
    kSkip,   // open, or the probe is out: do not publish
  };
  enum class Verdict {
    kImFailing,     // no answer, 5xx, app-wide or global-rate error, publisher breaker open
    kHealthy,       // IM answered about the message (delivered or a row/room verdict)
    kInconclusive,  // e.g. a timeout shortened by the command's deadline
  };
  enum class Transition { kNone, kOpened, kReopened, kClosed };

  explicit SyncBreaker(int failures_to_open = kFailuresToOpen,
                       std::chrono::milliseconds cooldown = kCooldown);
  SyncBreaker(const SyncBreaker&) = delete;
  SyncBreaker& operator=(const SyncBreaker&) = delete;

  Admission Admit(int64_t steady_ms);
  Transition Record(Verdict verdict, bool probe, int64_t steady_ms);
  // The probe's commit made no request (it failed, or its rows were held for another reason):
  // the next Admit probes again.
  void CancelProbe();

  bool is_open() const;  // open or half-open
  std::chrono::milliseconds cooldown() const { return cooldown_; }

 private:
  const int failures_to_open_;
  const std::chrono::milliseconds cooldown_;
  mutable std::mutex mu_;
  int failures_ = 0;
  bool open_ = false;
  bool probe_out_ = false;
  int64_t reopens_at_ms_ = 0;
};

// What one sync publish says about IM as a whole. `cut` is true when the command's deadline, not
// sync_publish_timeout, bounded the call.
SyncBreaker::Verdict SyncVerdict(const core::PublishOutcome& outcome, bool cut);

// Records one sync publish's outcome (inline or background) and logs the breaker opening or
// closing once each through `log` (may be empty).
void NoteSyncOutcome(SyncBreaker& breaker, const core::PublishOutcome& outcome, bool cut,
                     bool probe, int64_t steady_ms, const LogCallback& log);

// The process's breaker for hooks aimed at `endpoint` and `sdk_app_id`: the same object while
// anyone holds it. Thread-safe.
std::shared_ptr<SyncBreaker> ProcessSyncBreaker(const std::string& endpoint, uint64_t sdk_app_id);

}  // namespace room_outbox::internal
