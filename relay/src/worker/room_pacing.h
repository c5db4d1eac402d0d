// RoomPacing: holds each room to its gap, the minimum time between two sends to one room, across
// rounds. The only code of the relay loop that knows room_min_interval: when a room may be sent to
// next, how a claim cuts a busy room's run (run_cut_rows), which rooms a claim is told are paced,
// how long the loop idles while rows a claim scheduled for a paced room are coming due, and the
// longest sleep pacing can ask for. (The pacing words are listed in store/claim_plan.h.)
//
// A room's gap is room_min_interval (the shipped 25ms: Tencent's 40 messages/s per group) until
// IM refuses the room for frequency (MsgFreqCtrl, 10023: Refused): its gap then doubles, up to
// kMaxGapFactor x room_min_interval, and each message IM takes from it afterwards (Delivered)
// brings the gap 1/8 of the way back down, to room_min_interval again. So a room other senders
// share (the room service's hook, another relay) backs off alone, to what the group's cap leaves
// it, and climbs back when the cap allows; the other rooms keep room_min_interval. The claim's
// run cut and interval slots stay at room_min_interval; a backed-off room's later rows wait out
// its gap in the round.
//
// Every time here is monotonic (Clock::SteadyMs): a wall-clock step changes nothing. A
// room_min_interval of 0 (or ordering = "none", for which the worker passes 0) disables it: every
// room is ready.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>

#include "store/relay_store.h"

namespace room_outbox::relay {

// A refused room's gap grows to at most this many times room_min_interval (400ms at the shipped
// 25ms: 2.5 messages a second).
inline constexpr int64_t kMaxGapFactor = 16;
// A widened gap is forgotten this long after the room's last send (the room went quiet).
inline constexpr std::chrono::milliseconds kGapMemory{60000};

class RoomPacing {
 public:
  explicit RoomPacing(std::chrono::milliseconds room_min_interval);

  bool enabled() const { return room_min_interval_.count() > 0; }

  // A claim sends a room at most one poll_interval's worth of rows; the room's other due
  // rows are scheduled one room_min_interval apart after them (see ClaimOptions). No-op when
  // disabled.
  void CutRuns(ClaimOptions& options, std::chrono::milliseconds poll_interval) const;

  // Tells a claim the paced rooms: those sent to less than a gap ago, and how long each is
  // paced for (ClaimOptions::paced_rooms), so it schedules their rows after that instead of
  // leasing rows a round would only wait for. No-op when disabled.
  void AddPaced(ClaimOptions& options, int64_t now) const;

  // Milliseconds until `room` may be sent again (0: now).
  int64_t WaitMs(const std::string& room, int64_t now) const;
  // The room's gap now: room_min_interval, or more after refusals.
  int64_t GapMs(const std::string& room) const;
  // The shortest wait among `rooms`.
  int64_t WaitMs(std::span<const std::string> rooms, int64_t now) const;
  void Sent(const std::string& room, int64_t now);
  // IM refused the room for frequency (failure scope room): its gap doubles.
  void Refused(const std::string& room);
  // IM took a message of the room: a widened gap comes 1/8 of the way back.
  void Delivered(const std::string& room);
  // Rooms whose gap is wider than room_min_interval (room_outbox_rooms_backed_off).
  size_t backed_off() const { return gaps_.size(); }
  // Forgets rooms whose last send is a whole gap ago (keeps the maps small; a widened gap is kept
  // kGapMemory after the room's last send).
  void Forget(int64_t now);

  // A claim taken at `claimed_at` scheduled a room's rows up to `paced_for_ms` later.
  void Scheduled(int64_t claimed_at, int64_t paced_for_ms);
  // The idle after a round that delivered: one gap while scheduled rows are still coming due
  // (so the room keeps its room_min_interval), else poll_interval.
  std::chrono::milliseconds IdleAfterDelivery(std::chrono::milliseconds poll_interval,
                                              int64_t now) const;
  // The longest sleep the loop takes for pacing or polling: max(poll_interval, the gap).
  std::chrono::milliseconds MaxSleep(std::chrono::milliseconds poll_interval) const;

 private:
  std::chrono::milliseconds room_min_interval_;
  std::unordered_map<std::string, int64_t> last_send_;
  // Rooms whose gap is wider than room_min_interval: the gap in milliseconds and the room's last
  // send (for kGapMemory).
  struct WideGap {
    int64_t gap_ms = 0;
    int64_t last_send = 0;
  };
  std::unordered_map<std::string, WideGap> gaps_;
  int64_t scheduled_until_ = 0;
  bool scheduled_ = false;
};

}  // namespace room_outbox::relay
