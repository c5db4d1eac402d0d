#include "core/tencent/im_breaker.h"

#include <algorithm>

namespace room_outbox {
ImBreaker::ImBreaker(std::chrono::milliseconds cooldown)
    : cooldown_(cooldown > std::chrono::milliseconds::zero() ? cooldown : kDefaultBreakerCooldown) {}

ImBreaker::Admission ImBreaker::Admit(TimePoint now) {
  std::lock_guard<std::mutex> lock(mu_);
  switch (state_) {
    case State::kClosed:
      return Admission::kAllow;
    case State::kOpen:
      if (now < reopens_at_) {
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
                                    std::chrono::milliseconds min_cooldown, TimePoint now) {
  std::lock_guard<std::mutex> lock(mu_);
  const TimePoint until = now + std::max(cooldown_, min_cooldown);
  if (verdict == Verdict::kAppFailure) {
    switch (state_) {
      case State::kClosed:
        state_ = State::kOpen;
        reopens_at_ = until;
        probe_out_ = false;
        return BreakerTransition::kOpened;
      case State::kOpen:
        // A request that was in flight when the breaker opened: keep the later end.
        reopens_at_ = std::max(reopens_at_, until);
        return BreakerTransition::kNone;
      case State::kHalfOpen:
        if (!probe) {
          return BreakerTransition::kNone;  // a straggler; the probe decides
        }
        state_ = State::kOpen;
        reopens_at_ = until;
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

bool ImBreaker::RejectsAt(TimePoint now) const {
  std::lock_guard<std::mutex> lock(mu_);
  return (state_ == State::kOpen && now < reopens_at_) ||
         (state_ == State::kHalfOpen && probe_out_);
}

ImBreaker::TimePoint ImBreaker::reopens_at() const {
  std::lock_guard<std::mutex> lock(mu_);
  return reopens_at_;
}

const char* ImBreakerStateName(ImBreaker::State state) {
  switch (state) {
    case ImBreaker::State::kClosed: return "closed";
    case ImBreaker::State::kOpen: return "open";
    case ImBreaker::State::kHalfOpen: return "half_open";
  }
  return "closed";
}

}  // namespace room_outbox
