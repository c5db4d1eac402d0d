#include "core/app_budget/app_budget_member.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>

#include "core/host_name.h"

namespace room_outbox::core {
namespace {

// Rows of members that stopped beating without leaving are deleted once this old, every
// kExpireEveryBeats beats.
constexpr int64_t kExpireAgeMs = 60000;
constexpr int kExpireEveryBeats = 30;

}  // namespace

std::string AppKey(const std::string& endpoint_base, uint64_t sdk_app_id) {
  return endpoint_base + " " + std::to_string(sdk_app_id);
}

std::string NewMemberId() {
  char random[17];
  std::snprintf(random, sizeof random, "%016llx",
                static_cast<unsigned long long>(std::random_device{}()) << 32 ^
                    static_cast<unsigned long long>(std::random_device{}()));
  std::string host = HostName().substr(0, 128);
  return host + ":" + std::to_string(::getpid()) + ":" + random;
}

std::unique_ptr<AppBudgetMember> AppBudgetMember::Start(AppBudgetSettings settings,
                                                        std::shared_ptr<SharedRateBudget> budget,
                                                        OnBeat on_beat) {
  settings.mysql.connect_timeout =
      std::min(settings.mysql.connect_timeout, std::chrono::milliseconds(2000));
  std::unique_ptr<AppBudgetMember> member(
      new AppBudgetMember(std::move(settings), std::move(budget), std::move(on_beat)));
  member->BeatOnce();
  member->thread_ = std::thread([m = member.get()] { m->Loop(); });
  return member;
}

AppBudgetMember::AppBudgetMember(AppBudgetSettings settings,
                                 std::shared_ptr<SharedRateBudget> budget, OnBeat on_beat)
    : settings_(std::move(settings)),
      budget_(std::move(budget)),
      on_beat_(std::move(on_beat)),
      lock_name_(AppBudgetLockName(settings_.mysql.database, settings_.app_key)),
      last_beat_(std::chrono::steady_clock::now()) {}

AppBudgetMember::~AppBudgetMember() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) {
    thread_.join();
  }
  if (store_) {
    (void)store_->Leave(settings_.app_key, settings_.member_id);
  }
}

std::chrono::milliseconds ShareValidity(std::chrono::milliseconds beat_interval,
                                        std::chrono::steady_clock::time_point beat_started) {
  const auto spent = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - beat_started);
  const auto valid = beat_interval * kShareValidHalfBeats / 2 - spent;
  return std::max(valid, std::chrono::milliseconds(1));
}

AppBudgetStatus AppBudgetMember::status() const {
  std::lock_guard<std::mutex> lock(mu_);
  return status_;
}

bool AppBudgetMember::WaitForStop(std::chrono::milliseconds duration) {
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_for(lock, duration, [this] { return stop_; });
}

void AppBudgetMember::Loop() {
  while (!WaitForStop(catching_up_ ? settings_.beat_interval / kCatchUpDivisor
                                   : settings_.beat_interval)) {
    BeatOnce();
  }
}

Result<AppShare> AppBudgetMember::Exchange(int64_t demand) {
  if (!store_) {
    auto connected = AppMemberStore::Connect(settings_.mysql);
    if (!connected) return Fail(connected.error());
    store_ = std::move(*connected);
  }
  // Read, then beat with the share just computed, under the app's lock: the others see at once
  // what this member takes, and none reads the members between this read and this beat.
  auto locked = store_->Lock(lock_name_, kBudgetLockWaitSeconds);
  if (!locked) return Fail(locked.error());
  if (!*locked) {
    return Fail(ErrorCode::kUnavailable, "the app's budget lock (" + lock_name_ +
                                             ") was held by another connection for " +
                                             std::to_string(kBudgetLockWaitSeconds) + " s");
  }
  Result<AppShare> share = ReadAndBeat(demand);
  if (auto unlocked = store_->Unlock(lock_name_); !unlocked && share) {
    return Fail(unlocked.error());
  }
  if (!share) return share;
  if (++beats_ % kExpireEveryBeats == 0) {
    (void)store_->Expire(settings_.app_key, kExpireAgeMs);
  }
  return share;
}

Result<AppShare> AppBudgetMember::ReadAndBeat(int64_t demand) {
  auto reading = store_->Read(settings_.app_key);
  if (!reading) return Fail(reading.error());
  AppShare share = SplitAppBudget(reading->members, settings_.member_id, settings_.app_limit,
                                  reading->server_now_ms, settings_.beat_interval.count());
  const double most = std::min(settings_.app_limit, settings_.process_cap);
  const auto taken = static_cast<int64_t>(std::ceil(std::min(share.requests_per_second, most)));
  if (auto beat = store_->Beat(settings_.app_key, settings_.member_id, demand, taken); !beat) {
    return Fail(beat.error());
  }
  return share;
}

void AppBudgetMember::BeatOnce() {
  const auto now = std::chrono::steady_clock::now();
  const auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(now - last_beat_);
  last_beat_ = now;
  const RateBudget::Usage usage = budget_->TakeUsage();
  const double most = std::min(settings_.app_limit, settings_.process_cap);
  const int64_t demand = ReportedDemand(usage.acquired, usage.waited, elapsed.count(), most);
  AppBudgetStatus status;
  if (Result<AppShare> share = Exchange(demand)) {
    status.share = share->requests_per_second;
    status.live_members = share->live_members;
    status.table_reached = true;
    catching_up_ = share->waiting_for_others;
    last_share_ = std::min(status.share, most);
  } else {
    store_.reset();  // reconnect on the next beat
    catching_up_ = false;
    status.share = FallbackShare(last_share_, settings_.app_limit, kAssumedMembersUnread);
    status.error = share.error().message;
    last_share_ = std::min(status.share, most);
  }
  budget_->SetShare(status.share, ShareValidity(settings_.beat_interval, now));
  {
    std::lock_guard<std::mutex> lock(mu_);
    status_ = status;
  }
  if (on_beat_) on_beat_(status);
}

}  // namespace room_outbox::core
