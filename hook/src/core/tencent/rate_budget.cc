#include "core/tencent/rate_budget.h"

#include <algorithm>
#include <cmath>

namespace room_outbox {
namespace {

constexpr double kMinRate = 1.0;
constexpr int64_t kAdjustIntervalMs = 1000;
constexpr double kRecoveryFactor = 1.10;
// Refill adds up fractions of tokens in floating point; without slack, 0.4 + 0.6 tokens could
// come out a hair under one and delay a request by a microsecond.
constexpr double kTokenSlack = 1e-9;

}  // namespace

RateBudget::RateBudget(double max_per_second, Clock& clock)
    : configured_max_(std::max(max_per_second, kMinRate)),
      max_rate_(configured_max_),
      rate_(max_rate_),
      clock_(clock),
      last_refill_ms_(clock_.SteadyMs()),
      last_change_ms_(last_refill_ms_),
      last_cut_ms_(last_refill_ms_) {
  tokens_ = Capacity();
}

double RateBudget::Capacity() const { return burst_ > 0 ? burst_ : std::max(1.0, rate_ / 10.0); }

void RateBudget::Refill(int64_t now_ms) {
  if (now_ms <= last_refill_ms_) {
    return;
  }
  const double elapsed_s = static_cast<double>(now_ms - last_refill_ms_) / 1000.0;
  tokens_ = std::min(Capacity(), tokens_ + elapsed_s * rate_);
  last_refill_ms_ = now_ms;
}

std::chrono::microseconds RateBudget::TryAcquire() {
  Refill(clock_.SteadyMs());
  if (tokens_ >= 1.0 - kTokenSlack) {
    tokens_ = std::max(0.0, tokens_ - 1.0);
    ++usage_.acquired;
    return std::chrono::microseconds(0);
  }
  ++usage_.waited;
  double wait_us = std::ceil((1.0 - tokens_) / rate_ * 1e6);
  return std::chrono::microseconds(std::max<int64_t>(1, static_cast<int64_t>(wait_us)));
}

std::chrono::microseconds RateBudget::TimeUntil(size_t count) {
  Refill(clock_.SteadyMs());
  const double wanted = std::min(static_cast<double>(std::max<size_t>(count, 1)), Capacity());
  if (tokens_ >= wanted - kTokenSlack) {
    return std::chrono::microseconds(0);
  }
  const double wait_us = std::ceil((wanted - tokens_) / rate_ * 1e6);
  return std::chrono::microseconds(std::max<int64_t>(1, static_cast<int64_t>(wait_us)));
}

void RateBudget::SetShare(double share) {
  Refill(clock_.SteadyMs());
  const double capped = std::min(std::max(share, kMinRate), configured_max_);
  const double burst = std::max(1.0, capped * kShareBurstFraction);
  const double ceiling = std::max(kMinRate, capped - burst);
  const bool recovering = rate_ < max_rate_;
  max_rate_ = ceiling;
  burst_ = burst;
  if (!recovering || rate_ > max_rate_) {
    rate_ = max_rate_;
  }
  tokens_ = std::min(tokens_, Capacity());
}

RateBudget::Usage RateBudget::TakeUsage() {
  const Usage taken = usage_;
  usage_ = Usage{};
  return taken;
}

void RateBudget::OnRateLimited() {
  const int64_t now_ms = clock_.SteadyMs();
  if (cut_once_ && now_ms - last_cut_ms_ < kAdjustIntervalMs) {
    return;
  }
  Refill(now_ms);
  rate_ = std::max(kMinRate, rate_ / 2.0);
  // Drop the saved-up burst too: the server just told us we are too fast.
  tokens_ = std::min(tokens_, Capacity());
  cut_once_ = true;
  last_cut_ms_ = now_ms;
  last_change_ms_ = now_ms;
}

void RateBudget::OnCleanAnswer() {
  if (rate_ >= max_rate_) {
    return;
  }
  const int64_t now_ms = clock_.SteadyMs();
  if (now_ms - last_change_ms_ < kAdjustIntervalMs) {
    return;
  }
  Refill(now_ms);
  rate_ = std::min(max_rate_, rate_ * kRecoveryFactor);
  last_change_ms_ = now_ms;
}

}  // namespace room_outbox
