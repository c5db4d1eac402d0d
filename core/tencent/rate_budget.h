// RateBudget: the request pacing of one publisher. A token bucket refilled at an effective rate
// that starts at its ceiling, is cut (floor 1/s) when IM answers with a frequency limit (halved;
// by a tenth under a share of the app's known limit), and climbs back by 10% per second of clean
// answers, up to the ceiling. The ceiling is the
// configured requests per second, or, once SetShare was called, the process's share of the app's
// budget (core/app_budget) within it.
//
// Pure bookkeeping: it never sleeps and reads time only through the injected Clock's monotonic
// milliseconds, so tests drive it deterministically. Not thread-safe: the owning publisher
// serialises calls.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>

#include "core/clock.h"

namespace room_outbox::core {

class RateBudget {
 public:
  // `max_per_second` > 0; `clock` must outlive the budget. The bucket holds 100ms worth of
  // requests (at least one) and starts full, so a short burst goes out at once and longer runs
  // keep to the rate.
  RateBudget(double max_per_second, Clock& clock);

  // Takes a token when one is there and returns zero; otherwise takes nothing and returns how
  // long until the next token (at least 1µs).
  std::chrono::microseconds TryAcquire();

  // How long until `count` tokens are there (at most a full bucket's worth); zero when they are.
  // Takes nothing: a caller with several requests ready sleeps once for all of them.
  std::chrono::microseconds TimeUntil(size_t count);

  // The process's share of the app's budget, in requests per second (capped at the configured
  // rate): the ceiling of the rate, and from now on also a window: no more than the share's
  // whole requests within any kShareWindow (a second, as IM counts, plus a margin for the time
  // between taking a token and the request's arrival), so the bucket's burst stays inside the
  // share. A lower ceiling applies at once; a higher one at once unless a frequency-limit cut
  // is still climbing back.
  //
  // `valid_for` > 0: the share holds that long and no longer. Past it, until the next SetShare,
  // the ceiling is the least rate (1/s): the other members count a member whose beat is late as
  // gone and split its part among themselves, so one that could not beat in time (its process
  // starved of CPU) must not keep sending at a share they no longer leave it. 0: no end.
  void SetShare(double share, std::chrono::milliseconds valid_for = std::chrono::milliseconds(0));

  // What the budget was asked since the last call: tokens taken, and TryAcquire calls that found
  // none (the process could have sent more). Resets both.
  struct Usage {
    uint64_t acquired = 0;
    uint64_t waited = 0;
  };
  Usage TakeUsage();

  // IM answered with a frequency limit: halve the rate, or under a share (SetShare) cut it by a
  // tenth (not below 1/s). Limit answers within a second of the previous cut count as one: they
  // were mostly sent before it took effect.
  void OnRateLimited();

  // IM answered without a frequency limit: after at least a second since the last change,
  // raise the rate by 10% (up to the configured maximum).
  void OnCleanAnswer();

  static constexpr std::chrono::milliseconds kShareWindow{1020};

  double effective_rate() const { return rate_; }
  double max_rate() const { return max_rate_; }
  // Whether the last share's validity ran out (as of the last call that read the clock).
  bool share_expired() const { return share_expired_; }

 private:
  void Refill(int64_t now_ms);
  // Past the share's validity: the least rate until the next SetShare.
  void ExpireShare(int64_t now_ms);
  // Drops the window's entries older than kShareWindow; how long until `count` more tokens fit
  // in it (zero when they do or no share was set).
  std::chrono::microseconds WindowWait(int64_t now_ms, size_t count);
  double Capacity() const;

  double configured_max_;
  double max_rate_;
  double rate_;
  // Once SetShare was called: the most tokens taken within kShareWindow, and when each of the
  // last ones was taken (oldest first).
  size_t window_cap_ = 0;
  std::deque<int64_t> taken_ms_;
  Usage usage_;
  double tokens_;
  Clock& clock_;
  int64_t last_refill_ms_;
  int64_t last_change_ms_;  // last cut or raise
  int64_t last_cut_ms_;
  bool cut_once_ = false;
  int64_t share_valid_until_ms_ = -1;  // -1: no end
  bool share_expired_ = false;
};

}  // namespace room_outbox::core
