// RoomBackoff: the rooms whose IM group refused the hook's sync publish for frequency control (a
// room refusal, core::FailureScope::kRoom: Tencent's per-group cap of 40 messages/s answered
// with MsgDropReason "MsgFreqCtrl", or error 10023; TENCENT_IM.md 9.1), and how long the hook
// leaves each such room's rows to the relay instead of spending the room's messages itself.
//
// A room refusal of room R opens a backoff for R: kFirstBackoff after the first refusal, doubled
// by each further refusal while R is remembered, at most kMaxBackoff. R is remembered from its
// first refusal until a delivered message of R clears it, or until its backoff has been over for
// kMaxBackoff without another refusal (a refusal after that opens kFirstBackoff again). While
// R's backoff is open (BackedOff), the hook sends nothing of R: Commit writes the room's rows
// due at once for the relay and the background publisher releases the room's queued rows, both
// counted as room_outbox_hook_sync_skipped_total{reason="room_refused"}. Other rooms are not
// affected; neither the sync breaker nor the IM request budget hear of it.
//
// Memory: at most `max_rooms` rooms (kMaxRooms by default); remembering one more forgets the room
// refused longest ago, which only means that room's next command may be refused once more.
//
// Time: the Hook's clock's SteadyMs (core::Clock), so unit tests drive it by hand.
// Thread-safety: every call may come from any thread (the Hook's caller and its background
// publisher share one table).
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <list>
#include <mutex>
#include <string>
#include <unordered_map>

#include "core/clock.h"
#include "core/publisher.h"
#include "room_outbox/hook.h"

namespace room_outbox::internal {

class RoomBackoff {
 public:
  static constexpr std::chrono::milliseconds kFirstBackoff{1000};
  static constexpr std::chrono::milliseconds kMaxBackoff{16000};
  // A Hook serves the rooms of its Room Cells; the ones refused within the last half minute or so
  // are few even in a storm. 4096 rooms of about 100 bytes each keep the table under half a
  // megabyte whatever a room service does, and are more hot rooms than one app's 200 calls/s
  // could keep over the per-group cap at once.
  static constexpr size_t kMaxRooms = 4096;

  // `clock` must outlive the table.
  explicit RoomBackoff(core::Clock& clock, size_t max_rooms = kMaxRooms)
      : clock_(clock), max_rooms_(max_rooms == 0 ? 1 : max_rooms) {}
  RoomBackoff(const RoomBackoff&) = delete;
  RoomBackoff& operator=(const RoomBackoff&) = delete;

  // True while `room_id`'s backoff is open: the hook must not send the room's rows now.
  bool BackedOff(const std::string& room_id);
  // Records a room refusal of `room_id` now; returns the backoff it opened (kFirstBackoff, or the
  // room's last one doubled, at most kMaxBackoff).
  std::chrono::milliseconds Refused(const std::string& room_id);
  // A message of `room_id` was delivered: its backoff is cleared.
  void Delivered(const std::string& room_id);
  // The rooms remembered now (open or recently over).
  size_t rooms() const;

 private:
  struct Entry {
    int64_t backoff_ms = 0;
    int64_t until_ms = 0;                    // the backoff is open while SteadyMs() < until_ms
    std::list<std::string>::iterator order;  // its place in order_
  };
  using Table = std::unordered_map<std::string, Entry>;

  // Forgets `it` (called with mu_ held).
  void Forget(Table::iterator it);

  core::Clock& clock_;
  const size_t max_rooms_;
  mutable std::mutex mu_;
  Table rooms_;
  std::list<std::string> order_;  // least recently refused first
  // rooms_.size(), read without the lock: the commit path of a Hook with no refused room takes no
  // lock at all.
  std::atomic<size_t> size_{0};
};

// Feeds one sync publish outcome (inline or background) of `room_id` to `backoff`: a room refusal
// opens or lengthens the room's backoff and logs one warn line (room_id, backoff_ms, the error);
// a message IM took clears it; anything else leaves it as it is. `log` may be empty.
void NoteRoomOutcome(RoomBackoff& backoff, const std::string& room_id,
                     const core::PublishOutcome& outcome, const LogCallback& log);

}  // namespace room_outbox::internal
