// ImBreaker: the circuit breaker on Tencent IM, used at two scopes with the same state machine:
// the publisher's app-wide breaker (docs/relay.md, failure scopes) and the hook's sync-publish
// breaker (hook/src/sync_breaker.h). BreakerSettings says what differs between them.
//
// A failure says nobody can succeed for now, so sending more only hammers IM and charges rows
// (or commands) for nothing. After `failures_to_open` consecutive failures the breaker stops all
// sends for a cooldown and afterwards lets exactly one probe through:
//
//   closed --failures_to_open-th consecutive failure--> open
//   open --cooldown over, Admit--> half-open (one probe out)
//   half-open --probe healthy--> closed
//   half-open --probe failure--> open again (a new cooldown)
//   half-open --probe inconclusive, or CancelProbe--> half-open, the next Admit probes again
//
// A healthy answer resets the count of consecutive failures; an inconclusive one leaves it. The
// cooldown is max(settings cooldown, the failure's own minimum); 70050 asks for 60 s. Failures
// recorded while open that are not the probe's (requests that were in flight when it opened)
// push the end of the cooldown out to theirs when `late_failures_extend` is set and theirs is
// later, and are ignored otherwise; healthy answers that are not the probe's never close it.
//
// Pure logic over a monotonic time the caller passes (Clock::SteadyMs, in milliseconds): it
// never reads a clock and never sleeps. It logs nothing: Record() returns the transition so the
// caller logs the opening and the closing once. Thread-safe (an internal mutex).
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>

#include "core/publisher.h"
#include "room_outbox/options.h"

namespace room_outbox::core {

// What one scope's breaker counts and how long it stays open. The defaults are the publisher's
// app-wide breaker: one app-scope answer opens it, for [tencent_im] breaker_cooldown.
struct BreakerSettings {
  // Consecutive failures that open it; <= 0 means 1.
  int failures_to_open = 1;
  // <= 0 means kDefaultBreakerCooldown.
  std::chrono::milliseconds cooldown = kDefaultBreakerCooldown;
  // Whether a failure that is not the probe's, recorded while open, may push the end out.
  bool late_failures_extend = true;
};

class ImBreaker {
 public:
  enum class State { kClosed, kOpen, kHalfOpen };

  // What Admit allows the caller to do with one request.
  enum class Admission {
    kAllow,   // closed: send
    kProbe,   // the cooldown is over: send this one request as the probe, and Record it with
              // probe = true, or CancelProbe when no request was made
    kReject,  // open, or half-open with the probe still out: do not send
  };

  // What one answer says about IM as a whole at this scope.
  enum class Verdict {
    kFailure,       // nobody can succeed (what counts is the scope's: see its verdict function)
    kHealthy,       // IM answered about the message itself (delivered, or a row/room verdict)
    kInconclusive,  // proves nothing either way (e.g. no IM answer at the app scope)
  };

  explicit ImBreaker(BreakerSettings settings = {});
  ImBreaker(const ImBreaker&) = delete;
  ImBreaker& operator=(const ImBreaker&) = delete;

  // Decides whether one request may be sent at `steady_ms`. The first Admit after the cooldown
  // moves the breaker to half-open and returns kProbe; further calls return kReject until that
  // probe is recorded or cancelled.
  Admission Admit(int64_t steady_ms);

  // Records the verdict of one answered (or failed) request. `probe` is true for the request
  // Admit returned kProbe for. `min_cooldown` is the failure's own minimum (zero when it has
  // none). Returns kOpened when closed -> open, kReopened when a probe failed, kClosed when a
  // probe succeeded, else kNone.
  BreakerTransition Record(Verdict verdict, bool probe, std::chrono::milliseconds min_cooldown,
                           int64_t steady_ms);

  // The probe Admit handed out made no request: the next Admit probes again.
  void CancelProbe();

  State state() const;
  // Open or half-open: anything but closed (the gauge's 1).
  bool is_open() const;
  // True when Admit at `steady_ms` would reject without changing anything: open with the cooldown
  // still running, or half-open with the probe out. Lets a caller skip work up front.
  bool RejectsAt(int64_t steady_ms) const;
  // When (steady ms) an open breaker lets its probe through; meaningful only while open.
  int64_t reopens_at_ms() const;
  std::chrono::milliseconds cooldown() const { return settings_.cooldown; }
  int failures_to_open() const { return settings_.failures_to_open; }

 private:
  BreakerTransition RecordFailure(bool probe, int64_t until_ms);  // mu_ held
  void Open(int64_t until_ms);                                    // mu_ held

  const BreakerSettings settings_;
  mutable std::mutex mu_;
  State state_ = State::kClosed;
  int failures_ = 0;  // consecutive, while closed
  int64_t reopens_at_ms_ = 0;
  bool probe_out_ = false;
};

// "closed", "open", "half_open".
const char* ImBreakerStateName(ImBreaker::State state);

}  // namespace room_outbox::core
