// The process-wide request budget to Tencent IM.
//
// Tencent limits REST calls per app (200/s by default), not per connection or
// per object, so every publisher of a process that talks to the same app shares one budget: all
// Hooks of a room-service process (one per thread) draw from the same tokens, and a frequency
// limit one of them meets slows them all. Between processes, the budget is the process's share of
// the app's limit ([tencent_im] app_requests_per_second), which an AppBudgetMember
// (core/app_budget) keeps current through the database (SetShare); requests_per_second caps it.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "core/tencent/rate_budget.h"

namespace room_outbox::core {

// A RateBudget behind a mutex, for publishers on different threads.
class SharedRateBudget {
 public:
  // `clock` must outlive the budget.
  SharedRateBudget(double max_per_second, Clock& clock) : budget_(max_per_second, clock) {}
  // On a SystemClock of its own.
  explicit SharedRateBudget(double max_per_second)
      : own_clock_(std::make_unique<SystemClock>()), budget_(max_per_second, *own_clock_) {}
  SharedRateBudget(const SharedRateBudget&) = delete;
  SharedRateBudget& operator=(const SharedRateBudget&) = delete;

  // As RateBudget's.
  std::chrono::microseconds TryAcquire();
  std::chrono::microseconds TimeUntil(size_t count);
  void SetShare(double share, std::chrono::milliseconds valid_for = std::chrono::milliseconds(0));
  bool share_expired() const;
  RateBudget::Usage TakeUsage();
  void OnRateLimited();
  void OnCleanAnswer();
  double effective_rate() const;
  double max_rate() const;

 private:
  std::unique_ptr<SystemClock> own_clock_;  // before budget_, which reads it
  mutable std::mutex mu_;
  RateBudget budget_;
};

// The process's budget for publishers configured with the same endpoint, sdk_app_id and
// requests_per_second (> 0): while one such publisher holds the returned pointer, every other
// call with the same three values returns the same object; once all are gone, the next call
// starts a fresh, full budget. Publishers that differ in any of the three get separate budgets
// (a different rate is a different configuration, e.g. a test's). Thread-safe
// (core/process_registry.h). Time is the budget's own SystemClock's monotonic time: the budget is
// shared by publishers whatever clock each of them was given, so none of theirs may decide it.
std::shared_ptr<SharedRateBudget> ProcessRateBudget(const std::string& endpoint,
                                                    uint64_t sdk_app_id,
                                                    double requests_per_second);

}  // namespace room_outbox::core
