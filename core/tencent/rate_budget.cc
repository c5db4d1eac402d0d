#include "core/tencent/rate_budget.h"

#include <algorithm>
#include <cmath>

namespace room_outbox::core {
namespace {

constexpr double kMinRate = 1.0;
constexpr int64_t kAdjustIntervalMs = 1000;
constexpr double kRecoveryFactor = 1.10;
// The cut on a frequency-limit answer. Without a share the app's limit is unknown: halve. Under a
// share the rate is the process's part of the app's known limit, so such an answer says the
// requests arrived bunched (a window's edge, a late request) or a sender outside the division
// took some of the limit: a tenth less, which still reaches a limit half the share in 7 cuts.
constexpr double kCutFactor = 0.5;
constexpr double kShareCutFactor = 0.9;
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

double RateBudget::Capacity() const { return std::max(1.0, rate_ / 10.0); }

std::chrono::microseconds RateBudget::WindowWait(int64_t now_ms, size_t count) {
  if (window_cap_ == 0) {
    return std::chrono::microseconds(0);
  }
  while (!taken_ms_.empty() && now_ms - taken_ms_.front() >= kShareWindow.count()) {
    taken_ms_.pop_front();
  }
  const size_t wanted = std::min(std::max<size_t>(count, 1), window_cap_);
  if (taken_ms_.size() + wanted <= window_cap_) {
    return std::chrono::microseconds(0);
  }
  // The entry whose expiry makes room for `wanted` more.
  const int64_t frees_at =
      taken_ms_[taken_ms_.size() + wanted - window_cap_ - 1] + kShareWindow.count();
  return std::chrono::milliseconds(std::max<int64_t>(1, frees_at - now_ms));
}

void RateBudget::ExpireShare(int64_t now_ms) {
  if (share_expired_ || share_valid_until_ms_ < 0 || now_ms < share_valid_until_ms_) {
    return;
  }
  share_expired_ = true;
  max_rate_ = kMinRate;
  window_cap_ = 1;
  rate_ = std::min(rate_, max_rate_);
  tokens_ = std::min(tokens_, Capacity());
}

void RateBudget::Refill(int64_t now_ms) {
  ExpireShare(now_ms);
  if (now_ms <= last_refill_ms_) {
    return;
  }
  const double elapsed_s = static_cast<double>(now_ms - last_refill_ms_) / 1000.0;
  tokens_ = std::min(Capacity(), tokens_ + elapsed_s * rate_);
  last_refill_ms_ = now_ms;
}

std::chrono::microseconds RateBudget::TryAcquire() {
  const int64_t now_ms = clock_.SteadyMs();
  Refill(now_ms);
  if (const std::chrono::microseconds full = WindowWait(now_ms, 1); full.count() > 0) {
    ++usage_.waited;
    return full;
  }
  if (tokens_ >= 1.0 - kTokenSlack) {
    tokens_ = std::max(0.0, tokens_ - 1.0);
    ++usage_.acquired;
    if (window_cap_ > 0) taken_ms_.push_back(now_ms);
    return std::chrono::microseconds(0);
  }
  ++usage_.waited;
  double wait_us = std::ceil((1.0 - tokens_) / rate_ * 1e6);
  return std::chrono::microseconds(std::max<int64_t>(1, static_cast<int64_t>(wait_us)));
}

std::chrono::microseconds RateBudget::TimeUntil(size_t count) {
  const int64_t now_ms = clock_.SteadyMs();
  Refill(now_ms);
  const std::chrono::microseconds window = WindowWait(now_ms, count);
  const double wanted = std::min(static_cast<double>(std::max<size_t>(count, 1)), Capacity());
  if (tokens_ >= wanted - kTokenSlack) {
    return window;
  }
  const double wait_us = std::ceil((wanted - tokens_) / rate_ * 1e6);
  return std::max(window,
                  std::chrono::microseconds(std::max<int64_t>(1, static_cast<int64_t>(wait_us))));
}

void RateBudget::SetShare(double share, std::chrono::milliseconds valid_for) {
  const int64_t now_ms = clock_.SteadyMs();
  Refill(now_ms);
  const double capped = std::min(std::max(share, kMinRate), configured_max_);
  // Coming back from an expired share is not a frequency-limit cut: the rate takes the new share.
  const bool recovering = rate_ < max_rate_ && !share_expired_;
  share_expired_ = false;
  share_valid_until_ms_ = valid_for.count() > 0 ? now_ms + valid_for.count() : -1;
  max_rate_ = capped;
  window_cap_ = std::max<size_t>(1, static_cast<size_t>(std::floor(capped)));
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
  rate_ = std::max(kMinRate, rate_ * (window_cap_ > 0 ? kShareCutFactor : kCutFactor));
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

}  // namespace room_outbox::core
