// WakeGap: how soon after a round a wake-up ([wake] socket) may start the next one. A datagram
// carries nothing, so the relay cannot tell a commit's wake-up from a flood of empty ones; this
// bounds what any number of datagrams can cost the database:
//
//   - a wake-up ends the idle wait between rounds no sooner than the gap after the start of the
//     round before (however many datagrams arrive, they start at most one round per gap);
//   - the gap is [wake] min_interval while woken rounds find rows; each round a wake-up started
//     that claimed nothing doubles it, up to kMaxWakeGap (or min_interval when that is larger);
//     the first round that claims a row sets it back to min_interval.
//
// So a flood of datagrams that bring no rows settles at one woken round per kMaxWakeGap, and a
// row committed meanwhile is claimed within kMaxWakeGap of its datagram (plus a round); while
// commits do bring rows, a wake-up waits at most min_interval. The poll (poll_interval) is
// untouched: a wake-up only ever shortens the idle wait.
//
// Pure bookkeeping on the worker's monotonic clock (Clock::SteadyMs); not thread-safe (the
// worker's thread only).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>

namespace room_outbox::relay {

// [wake] min_interval's default: the least time between the starts of two rounds a wake-up
// starts. Short against the wake-up's promise (a row left for the relay is published within
// about 100 ms), long against a claim on an idle database (about a millisecond).
inline constexpr std::chrono::milliseconds kDefaultWakeMinInterval{10};
// The longest the gap grows to while woken rounds find nothing (a flood of datagrams): half the
// wake-up's promise, so a row committed during a flood still goes out within it.
inline constexpr std::chrono::milliseconds kMaxWakeGap{50};

class WakeGap {
 public:
  // `min_interval` > 0 ([wake] min_interval).
  explicit WakeGap(std::chrono::milliseconds min_interval);

  // A round starts at `now`.
  void RoundStarted(int64_t now);
  // The round that started last ended: `woken` when a wake-up started it, `claimed` when it
  // leased at least one row.
  void RoundEnded(bool woken, bool claimed);

  // The monotonic time before which a wake-up does not end the idle wait: the start of the last
  // round plus the gap (0 before any round).
  int64_t WakeAt() const { return started_ ? last_start_ + gap_.count() : 0; }
  std::chrono::milliseconds gap() const { return gap_; }

 private:
  std::chrono::milliseconds min_interval_;
  std::chrono::milliseconds max_gap_;
  std::chrono::milliseconds gap_;
  int64_t last_start_ = 0;
  bool started_ = false;
};

}  // namespace room_outbox::relay
