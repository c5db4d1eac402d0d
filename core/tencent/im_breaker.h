// ImBreaker: the app-scope circuit breaker of a Tencent IM publisher (docs/relay.md, failure
// scopes).
//
// An app-scope answer (wrong key or identifier, app disabled or expired, 70050 "UserSig checked
// too often", ...) says nobody can succeed, so sending more only hammers IM and charges rows
// for nothing. The breaker then stops all sends for a cooldown and afterwards lets exactly one
// probe through:
//
//   closed --app failure--> open --cooldown over, Admit--> half-open (one probe out)
//   half-open --probe healthy--> closed
//   half-open --probe app failure--> open again (a new cooldown)
//   half-open --probe inconclusive (no IM answer)--> half-open, the next Admit probes again
//
// The cooldown is max(configured cooldown, the failure's own minimum); 70050 asks for 60 s.
// App failures reported while already open (requests that were in flight when it opened) only
// push the end of the cooldown out when they ask for a later one; healthy answers of requests
// that are not the probe do not close it.
//
// Pure logic over a monotonic time the caller passes (Clock::SteadyMs, in milliseconds): it
// never reads a clock and never sleeps. It logs nothing: Record() returns the transition so the
// caller logs the opening and the closing once. Thread-safe (an internal mutex).
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>

#include "core/publisher.h"

namespace room_outbox::core {

class ImBreaker {
 public:
  enum class State { kClosed, kOpen, kHalfOpen };

  // What Admit allows the caller to do with one request.
  enum class Admission {
    kAllow,   // closed: send
    kProbe,   // the cooldown is over: send this one request as the probe, and Record it with
              // probe = true
    kReject,  // open, or half-open with the probe still out: do not send
  };

  // What one answer says about the app.
  enum class Verdict {
    kAppFailure,    // an app-scope answer: nobody can succeed
    kHealthy,       // IM answered about the message itself (delivered, or a row/room verdict)
    kInconclusive,  // no IM answer (timeout, connection error, HTTP 5xx, not JSON)
  };

  // `cooldown` <= 0 means 60 s.
  explicit ImBreaker(std::chrono::milliseconds cooldown);

  // Decides whether one request may be sent at `steady_ms`. The first Admit after the cooldown
  // moves the breaker to half-open and returns kProbe; further calls return kReject until that
  // probe is recorded.
  Admission Admit(int64_t steady_ms);

  // Records the verdict of one answered (or failed) request. `probe` is true for the request
  // Admit returned kProbe for. `min_cooldown` is the failure's own minimum (zero when it has
  // none). Returns kOpened when closed -> open, kReopened when a probe failed, kClosed when a
  // probe succeeded, else kNone.
  BreakerTransition Record(Verdict verdict, bool probe, std::chrono::milliseconds min_cooldown,
                           int64_t steady_ms);

  State state() const;
  // Open or half-open: anything but closed (the gauge's 1).
  bool is_open() const;
  // True when Admit at `steady_ms` would reject without changing anything: open with the cooldown
  // still running, or half-open with the probe out. Lets a caller skip work up front.
  bool RejectsAt(int64_t steady_ms) const;
  // When (steady ms) an open breaker lets its probe through; meaningful only while open.
  int64_t reopens_at_ms() const;
  std::chrono::milliseconds cooldown() const { return cooldown_; }

 private:
  const std::chrono::milliseconds cooldown_;
  mutable std::mutex mu_;
  State state_ = State::kClosed;
  int64_t reopens_at_ms_ = 0;
  bool probe_out_ = false;
};

// "closed", "open", "half_open".
const char* ImBreakerStateName(ImBreaker::State state);

}  // namespace room_outbox::core
