#include "core/tencent/im_breaker.h"

#include <algorithm>

namespace room_outbox::core {
ImBreaker::ImBreaker(std::chrono::milliseconds cooldown)
    : cooldown_(cooldown > std::chrono::milliseconds::zero() ? cooldown : kDefaultBreakerCooldown) {
}

ImBreaker::Admission ImBreaker::Admit(int64_t steady_ms) {
  std::lock_guard<std::mutex> lock(mu_);
  switch (state_) {
    case State::kClosed:
      return Admission::kAllow;
    case State::kOpen:
      if (steady_ms < reopens_at_ms_) {
        return Admission::kReject;
      }
      state_ = State::kHalfOpen;
      probe_out_ = true;
      return Admission::kProbe;
    case State::kHalfOpen:
      if (probe_out_) {
        return Admission::kReject;
      }
      probe_out_ = true;
      return Admission::kProbe;
  }
  return Admission::kReject;
}

BreakerTransition ImBreaker::Record(Verdict verdict, bool probe,
                                    std::chrono::milliseconds min_cooldown, int64_t steady_ms) {
  std::lock_guard<std::mutex> lock(mu_);
  const int64_t until = steady_ms + std::max(cooldown_, min_cooldown).count();
  if (verdict == Verdict::kAppFailure) {
    switch (state_) {
      case State::kClosed:
        state_ = State::kOpen;
        reopens_at_ms_ = until;
        probe_out_ = false;
        return BreakerTransition::kOpened;
      case State::kOpen:
        // A request that was in flight when the breaker opened: keep the later end.
        reopens_at_ms_ = std::max(reopens_at_ms_, until);
        return BreakerTransition::kNone;
      case State::kHalfOpen:
        if (!probe) {
          return BreakerTransition::kNone;  // a straggler; the probe decides
        }
        state_ = State::kOpen;
        reopens_at_ms_ = until;
        probe_out_ = false;
        return BreakerTransition::kReopened;
    }
    return BreakerTransition::kNone;
  }
  if (!probe || state_ != State::kHalfOpen) {
    return BreakerTransition::kNone;
  }
  if (verdict == Verdict::kHealthy) {
    state_ = State::kClosed;
    probe_out_ = false;
    return BreakerTransition::kClosed;
  }
  // No answer from IM: the probe proved nothing either way; let the next request probe.
  probe_out_ = false;
  return BreakerTransition::kNone;
}

ImBreaker::State ImBreaker::state() const {
  std::lock_guard<std::mutex> lock(mu_);
  return state_;
}

bool ImBreaker::is_open() const { return state() != State::kClosed; }

bool ImBreaker::RejectsAt(int64_t steady_ms) const {
  std::lock_guard<std::mutex> lock(mu_);
  return (state_ == State::kOpen && steady_ms < reopens_at_ms_) ||
         (state_ == State::kHalfOpen && probe_out_);
}

int64_t ImBreaker::reopens_at_ms() const {
  std::lock_guard<std::mutex> lock(mu_);
  return reopens_at_ms_;
}

const char* ImBreakerStateName(ImBreaker::State state) {
  switch (state) {
    case ImBreaker::State::kClosed:
      return "closed";
    case ImBreaker::State::kOpen:
      return "open";
    case ImBreaker::State::kHalfOpen:
      return "half_open";
  }
  return "closed";
}

}  // namespace room_outbox::core
