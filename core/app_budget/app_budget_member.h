// AppBudgetMember: this process as a member of its IM app's shared request budget
// (room_outbox_im_member, share_split.h). A thread with its own database connection beats every
// `beat_interval` (about a second): it writes the process's demand over the last beat (from the
// process's SharedRateBudget) and share, reads the app's members, computes its share of
// `app_limit` and gives it to the SharedRateBudget (SetShare), which keeps it within the
// process's own cap (requests_per_second) and still halves on a frequency-limit answer.
//
// While its share is below its fair part because the others have not given way yet (a member
// that joined, or whose demand grew), it beats every beat_interval / kCatchUpDivisor instead, so
// it takes what the others give up within a fraction of a beat.
//
// A beat reads the members and writes its share under the app's named lock (GET_LOCK, on both
// servers), so two members beating at the same moment (relays started together) never both take
// the part of the limit nobody has written yet.
//
// A member that cannot reach the table keeps its last share (never more; before any reading,
// app_limit / kAssumedMembersUnread) and keeps sending; it reconnects on the next beat. Start
// makes the first beat before it returns, so the process never sends at a share it did not
// compute; it waits for the connection at most its connect timeout (capped at 2 s).
//
// A share holds for one and a half beat intervals from the start of the beat that computed it
// (ShareValidity): the others count a member whose beat is two intervals old as gone and take its
// part, so a member whose thread is late (its process starved of CPU) drops to the least rate
// (RateBudget::SetShare) before they do, and takes its share again when it beats.
//
// One member per process and app: the owner (the relay, or the first Hook that sends) starts it
// and keeps it; the destructor stops the thread and deletes the member's row (a member that dies
// without it drops out when its beat is two intervals old).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "core/app_budget/member_store.h"
#include "core/tencent/process_rate_budget.h"
#include "core/wipe.h"
#include "room_outbox/options.h"

namespace room_outbox::core {

// The members a process assumes before it could read the table once.
inline constexpr int kAssumedMembersUnread = 4;
inline constexpr std::chrono::milliseconds kDefaultBeatInterval{1000};
inline constexpr int kCatchUpDivisor = 5;  // catching up: beat_interval / kCatchUpDivisor
// A share holds kShareValidHalfBeats half beat intervals (1.5 beats) from the start of its beat.
inline constexpr int kShareValidHalfBeats = 3;
// How long a beat waits for the app's budget lock (held by another member's beat for the few
// milliseconds of its read and write) before it keeps its last share for this beat.
inline constexpr int64_t kBudgetLockWaitSeconds = 1;

// How long a share computed by a beat that started at `beat_started` holds from now: 1.5 beat
// intervals from that start, at least 1 ms.
std::chrono::milliseconds ShareValidity(std::chrono::milliseconds beat_interval,
                                        std::chrono::steady_clock::time_point beat_started);

struct AppBudgetSettings {
  SecretOwner<MysqlOptions> mysql;  // the password wiped with the settings
  std::string app_key;              // AppKey(endpoint, sdk_app_id)
  std::string member_id;            // NewMemberId()
  double app_limit = 200;           // [tencent_im] app_requests_per_second, > 0
  double process_cap = 0;           // [tencent_im] requests_per_second (> 0)
  std::chrono::milliseconds beat_interval = kDefaultBeatInterval;
};

// What a beat found, for metrics and logs.
struct AppBudgetStatus {
  double share = 0;      // requests per second this process takes (before its own cap)
  int live_members = 0;  // 0 while the table cannot be read
  bool table_reached = false;
  std::string error;  // why the table could not be reached (no secrets)
};

// "<endpoint without trailing slashes> <sdk_app_id>": the same app whatever the spelling.
std::string AppKey(const std::string& endpoint_base, uint64_t sdk_app_id);
// "<host>:<pid>:<random hex>".
std::string NewMemberId();

class AppBudgetMember {
 public:
  using OnBeat = std::function<void(const AppBudgetStatus&)>;
  // `on_beat` runs on the member's thread after every beat (and in Start for the first).
  static std::unique_ptr<AppBudgetMember> Start(AppBudgetSettings settings,
                                                std::shared_ptr<SharedRateBudget> budget,
                                                OnBeat on_beat);
  ~AppBudgetMember();
  AppBudgetMember(const AppBudgetMember&) = delete;
  AppBudgetMember& operator=(const AppBudgetMember&) = delete;

  AppBudgetStatus status() const;

 private:
  AppBudgetMember(AppBudgetSettings settings, std::shared_ptr<SharedRateBudget> budget,
                  OnBeat on_beat);
  void Loop();
  void BeatOnce();
  // One beat against the table, under the app's budget lock: the share and the live members, or
  // the error.
  Result<AppShare> Exchange(int64_t demand);
  Result<AppShare> ReadAndBeat(int64_t demand);
  bool WaitForStop(std::chrono::milliseconds duration);

  AppBudgetSettings settings_;
  std::shared_ptr<SharedRateBudget> budget_;
  OnBeat on_beat_;
  const std::string lock_name_;  // AppBudgetLockName(database, app_key)
  std::unique_ptr<AppMemberStore> store_;
  std::optional<double> last_share_;
  std::chrono::steady_clock::time_point last_beat_;
  int beats_ = 0;
  bool catching_up_ = false;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  AppBudgetStatus status_;
  std::thread thread_;
};

}  // namespace room_outbox::core
