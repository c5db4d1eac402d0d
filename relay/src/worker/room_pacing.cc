#include "worker/room_pacing.h"

#include <algorithm>
#include <limits>

namespace room_outbox::relay {

RoomPacing::RoomPacing(std::chrono::milliseconds room_min_interval)
    : room_min_interval_(std::max(room_min_interval, std::chrono::milliseconds(0))) {}

void RoomPacing::CutRuns(ClaimOptions& options, std::chrono::milliseconds poll_interval) const {
  if (!enabled()) {
    return;
  }
  options.rooms.run_cut_rows =
      static_cast<size_t>(std::max<int64_t>(1, poll_interval.count() / room_min_interval_.count()));
  options.rooms.room_min_interval_ms = room_min_interval_.count();
}

void RoomPacing::AddPaced(ClaimOptions& options, int64_t now) const {
  if (!enabled()) {
    return;
  }
  for (const auto& [room, last] : last_send_) {
    const int64_t wait = last + GapMs(room) - now;
    if (wait > 0) options.paced_rooms.push_back(PacedRoom{.room_id = room, .paced_for_ms = wait});
  }
}

int64_t RoomPacing::WaitMs(const std::string& room, int64_t now) const {
  if (!enabled()) {
    return 0;
  }
  auto last = last_send_.find(room);
  if (last == last_send_.end()) {
    return 0;
  }
  return std::max<int64_t>(0, last->second + GapMs(room) - now);
}

int64_t RoomPacing::GapMs(const std::string& room) const {
  auto wide = gaps_.find(room);
  return wide == gaps_.end() ? room_min_interval_.count() : wide->second.gap_ms;
}

void RoomPacing::Refused(const std::string& room) {
  if (!enabled()) {
    return;
  }
  const int64_t floor = room_min_interval_.count();
  WideGap& wide = gaps_[room];
  wide.gap_ms = std::min(std::max(wide.gap_ms, floor) * 2, floor * kMaxGapFactor);
  auto last = last_send_.find(room);
  if (last != last_send_.end()) wide.last_send = last->second;
}

void RoomPacing::Delivered(const std::string& room) {
  auto wide = gaps_.find(room);
  if (wide == gaps_.end()) {
    return;
  }
  const int64_t floor = room_min_interval_.count();
  wide->second.gap_ms -= (wide->second.gap_ms - floor + 7) / 8;  // rounded up: it reaches floor
  if (wide->second.gap_ms <= floor) gaps_.erase(wide);
}

int64_t RoomPacing::WaitMs(std::span<const std::string> rooms, int64_t now) const {
  int64_t shortest = std::numeric_limits<int64_t>::max();
  for (const std::string& room : rooms) {
    shortest = std::min(shortest, WaitMs(room, now));
  }
  return rooms.empty() ? 0 : shortest;
}

void RoomPacing::Sent(const std::string& room, int64_t now) {
  if (!enabled()) {
    return;
  }
  last_send_[room] = now;
  auto wide = gaps_.find(room);
  if (wide != gaps_.end()) wide->second.last_send = now;
}

void RoomPacing::Forget(int64_t now) {
  std::erase_if(last_send_,
                [&](const auto& entry) { return now - entry.second >= GapMs(entry.first); });
  std::erase_if(
      gaps_, [&](const auto& entry) { return now - entry.second.last_send >= kGapMemory.count(); });
}

void RoomPacing::Scheduled(int64_t claimed_at, int64_t paced_for_ms) {
  if (paced_for_ms <= 0) {
    return;
  }
  const int64_t until = claimed_at + paced_for_ms;
  scheduled_until_ = scheduled_ ? std::max(scheduled_until_, until) : until;
  scheduled_ = true;
}

std::chrono::milliseconds RoomPacing::IdleAfterDelivery(std::chrono::milliseconds poll_interval,
                                                        int64_t now) const {
  if (enabled() && scheduled_ && now < scheduled_until_) {
    return std::min(poll_interval, room_min_interval_);
  }
  return poll_interval;
}

std::chrono::milliseconds RoomPacing::MaxSleep(std::chrono::milliseconds poll_interval) const {
  return std::max(poll_interval, room_min_interval_);
}

}  // namespace room_outbox::relay
