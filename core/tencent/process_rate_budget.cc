#include "core/tencent/process_rate_budget.h"

#include <map>
#include <tuple>

namespace room_outbox::core {
namespace {

using Key = std::tuple<std::string, uint64_t, double>;

struct Registry {
  SystemClock clock;  // every budget's time
  std::mutex mu;
  std::map<Key, std::weak_ptr<SharedRateBudget>> budgets;
};

// Never destroyed: a publisher that outlives static destruction (a host's static Hook) must
// still find it, and leaking one small map at exit costs nothing.
Registry& TheRegistry() {
  static Registry* registry = new Registry;
  return *registry;
}

}  // namespace

std::chrono::microseconds SharedRateBudget::TryAcquire() {
  std::lock_guard<std::mutex> lock(mu_);
  return budget_.TryAcquire();
}

std::chrono::microseconds SharedRateBudget::TimeUntil(size_t count) {
  std::lock_guard<std::mutex> lock(mu_);
  return budget_.TimeUntil(count);
}

void SharedRateBudget::SetShare(double share) {
  std::lock_guard<std::mutex> lock(mu_);
  budget_.SetShare(share);
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
  Registry& registry = TheRegistry();
  std::lock_guard<std::mutex> lock(registry.mu);
  // Drop the entries of budgets nobody holds any more, so the map stays as small as the set of
  // live configurations.
  for (auto it = registry.budgets.begin(); it != registry.budgets.end();) {
    it = it->second.expired() ? registry.budgets.erase(it) : std::next(it);
  }
  Key key{endpoint, sdk_app_id, requests_per_second};
  if (auto existing = registry.budgets[key].lock()) {
    return existing;
  }
  auto budget = std::make_shared<SharedRateBudget>(requests_per_second, registry.clock);
  registry.budgets[key] = budget;
  return budget;
}

}  // namespace room_outbox::core
