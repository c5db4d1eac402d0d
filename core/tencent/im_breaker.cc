#include "core/tencent/im_breaker.h"

#include <algorithm>

namespace room_outbox::core {
namespace {

BreakerSettings Checked(BreakerSettings settings) {
  if (settings.failures_to_open <= 0) settings.failures_to_open = 1;
  if (settings.cooldown <= std::chrono::milliseconds::zero()) {
    settings.cooldown = kDefaultBreakerCooldown;
  }
  return settings;
}

}  // namespace

ImBreaker::ImBreaker(BreakerSettings settings) : settings_(Checked(settings)) {}

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
  if (verdict == Verdict::kFailure) {
    return RecordFailure(probe, steady_ms + std::max(settings_.cooldown, min_cooldown).count());
  }
  if (verdict == Verdict::kHealthy) {
    failures_ = 0;
  }
  if (!probe || state_ != State::kHalfOpen) {
    return BreakerTransition::kNone;
  }
  probe_out_ = false;
  if (verdict == Verdict::kHealthy) {
    state_ = State::kClosed;
    return BreakerTransition::kClosed;
  }
  // Inconclusive: the probe proved nothing either way; let the next request probe.
  return BreakerTransition::kNone;
}

BreakerTransition ImBreaker::RecordFailure(bool probe, int64_t until_ms) {
  switch (state_) {
    case State::kClosed:
      if (++failures_ < settings_.failures_to_open) {
        return BreakerTransition::kNone;
      }
      Open(until_ms);
      return BreakerTransition::kOpened;
    case State::kOpen:
      // A request that was in flight when the breaker opened.
      if (settings_.late_failures_extend) {
        reopens_at_ms_ = std::max(reopens_at_ms_, until_ms);
      }
      return BreakerTransition::kNone;
    case State::kHalfOpen:
      if (!probe) {
        return BreakerTransition::kNone;  // a straggler; the probe decides
      }
      Open(until_ms);
      return BreakerTransition::kReopened;
  }
  return BreakerTransition::kNone;
}

void ImBreaker::Open(int64_t until_ms) {
  state_ = State::kOpen;
  reopens_at_ms_ = until_ms;
  probe_out_ = false;
  failures_ = 0;
}

void ImBreaker::CancelProbe() {
  std::lock_guard<std::mutex> lock(mu_);
  if (state_ == State::kHalfOpen) {
    probe_out_ = false;
  }
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
