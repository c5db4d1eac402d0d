#include "core/tencent/rate_budget.h"

#include <algorithm>
#include <cmath>

namespace room_outbox {
namespace {

constexpr double kMinRate = 1.0;
constexpr auto kAdjustInterval = std::chrono::seconds(1);
constexpr double kRecoveryFactor = 1.10;
// Refill adds up fractions of tokens in floating point; without slack, 0.4 + 0.6 tokens could
// come out a hair under one and delay a request by a microsecond.
constexpr double kTokenSlack = 1e-9;

}  // namespace

RateBudget::RateBudget(double max_per_second, Now now)
    : max_rate_(std::max(max_per_second, kMinRate)),
      rate_(max_rate_),
      now_(std::move(now)),
      last_refill_(now_()),
      last_change_(last_refill_),
      last_cut_(last_refill_) {
  tokens_ = Capacity();
}

double RateBudget::Capacity() const { return std::max(1.0, rate_ / 10.0); }

void RateBudget::Refill(TimePoint now) {
  if (now <= last_refill_) {
    return;
  }
  double elapsed_s = std::chrono::duration<double>(now - last_refill_).count();
  tokens_ = std::min(Capacity(), tokens_ + elapsed_s * rate_);
  last_refill_ = now;
}

std::chrono::microseconds RateBudget::TryAcquire() {
  Refill(now_());
  if (tokens_ >= 1.0 - kTokenSlack) {
    tokens_ = std::max(0.0, tokens_ - 1.0);
    return std::chrono::microseconds(0);
  }
  double wait_us = std::ceil((1.0 - tokens_) / rate_ * 1e6);
  return std::chrono::microseconds(std::max<int64_t>(1, static_cast<int64_t>(wait_us)));
}

void RateBudget::OnRateLimited() {
  TimePoint now = now_();
  if (cut_once_ && now - last_cut_ < kAdjustInterval) {
    return;
  }
  Refill(now);
  rate_ = std::max(kMinRate, rate_ / 2.0);
  // Drop the saved-up burst too: the server just told us we are too fast.
  tokens_ = std::min(tokens_, Capacity());
  cut_once_ = true;
  last_cut_ = now;
  last_change_ = now;
}

void RateBudget::OnCleanAnswer() {
  if (rate_ >= max_rate_) {
    return;
  }
  TimePoint now = now_();
  if (now - last_change_ < kAdjustInterval) {
    return;
  }
  Refill(now);
  rate_ = std::min(max_rate_, rate_ * kRecoveryFactor);
  last_change_ = now;
}

}  // namespace room_outbox
