#include "core/tencent/process_rate_budget.h"

#include "core/process_registry.h"

namespace room_outbox::core {

std::chrono::microseconds SharedRateBudget::TryAcquire() {
  std::lock_guard<std::mutex> lock(mu_);
  return budget_.TryAcquire();
}

std::chrono::microseconds SharedRateBudget::TimeUntil(size_t count) {
  std::lock_guard<std::mutex> lock(mu_);
  return budget_.TimeUntil(count);
}

void SharedRateBudget::SetShare(double share, std::chrono::milliseconds valid_for) {
  std::lock_guard<std::mutex> lock(mu_);
  budget_.SetShare(share, valid_for);
}

bool SharedRateBudget::share_expired() const {
  std::lock_guard<std::mutex> lock(mu_);
  return budget_.share_expired();
}

RateBudget::Usage SharedRateBudget::TakeUsage() {
  std::lock_guard<std::mutex> lock(mu_);
  return budget_.TakeUsage();
}

void SharedRateBudget::OnRateLimited() {
  std::lock_guard<std::mutex> lock(mu_);
  budget_.OnRateLimited();
}

void SharedRateBudget::OnCleanAnswer() {
  std::lock_guard<std::mutex> lock(mu_);
  budget_.OnCleanAnswer();
}

double SharedRateBudget::effective_rate() const {
  std::lock_guard<std::mutex> lock(mu_);
  return budget_.effective_rate();
}

double SharedRateBudget::max_rate() const {
  std::lock_guard<std::mutex> lock(mu_);
  return budget_.max_rate();
}

std::shared_ptr<SharedRateBudget> ProcessRateBudget(const std::string& endpoint,
                                                    uint64_t sdk_app_id,
                                                    double requests_per_second) {
  static ProcessRegistry<SharedRateBudget> budgets;
  return budgets.Get(RegistryKey(endpoint, sdk_app_id, requests_per_second),
                     [&] { return std::make_shared<SharedRateBudget>(requests_per_second); });
}

}  // namespace room_outbox::core
