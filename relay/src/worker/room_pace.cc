#include "worker/room_pace.h"

#include <algorithm>
#include <limits>

namespace room_outbox::relay {

RoomPace::RoomPace(std::chrono::milliseconds min_interval)
    : min_interval_(std::max(min_interval, std::chrono::milliseconds(0))) {}

void RoomPace::CutRuns(ClaimOptions& options, std::chrono::milliseconds poll_interval) const {
  if (!enabled()) {
    return;
  }
  options.run_cut_rows =
      static_cast<size_t>(std::max<int64_t>(1, poll_interval.count() / min_interval_.count()));
  options.room_min_interval_ms = min_interval_.count();
}

void RoomPace::AddPaced(ClaimOptions& options, int64_t now) const {
  if (!enabled()) {
    return;
  }
  for (const auto& [room, last] : last_send_) {
    const int64_t wait = last + min_interval_.count() - now;
    if (wait > 0) options.paced_rooms.push_back(PacedRoom{.room_id = room, .paced_for_ms = wait});
  }
}

int64_t RoomPace::WaitMs(const std::string& room, int64_t now) const {
  if (!enabled()) {
    return 0;
  }
  auto last = last_send_.find(room);
  if (last == last_send_.end()) {
    return 0;
  }
  return std::max<int64_t>(0, last->second + min_interval_.count() - now);
}

int64_t RoomPace::WaitMs(std::span<const std::string> rooms, int64_t now) const {
  int64_t shortest = std::numeric_limits<int64_t>::max();
  for (const std::string& room : rooms) {
    shortest = std::min(shortest, WaitMs(room, now));
  }
  return rooms.empty() ? 0 : shortest;
}

void RoomPace::Sent(const std::string& room, int64_t now) {
  if (enabled()) {
    last_send_[room] = now;
  }
}

void RoomPace::Forget(int64_t now) {
  std::erase_if(last_send_,
                [&](const auto& entry) { return now - entry.second >= min_interval_.count(); });
}

void RoomPace::Scheduled(int64_t claimed_at, int64_t paced_for_ms) {
  if (paced_for_ms <= 0) {
    return;
  }
  const int64_t until = claimed_at + paced_for_ms;
  scheduled_until_ = scheduled_ ? std::max(scheduled_until_, until) : until;
  scheduled_ = true;
}

std::chrono::milliseconds RoomPace::IdleAfterDelivery(std::chrono::milliseconds poll_interval,
                                                      int64_t now) const {
  if (enabled() && scheduled_ && now < scheduled_until_) {
    return std::min(poll_interval, min_interval_);
  }
  return poll_interval;
}

std::chrono::milliseconds RoomPace::MaxSleep(std::chrono::milliseconds poll_interval) const {
  return std::max(poll_interval, min_interval_);
}

}  // namespace room_outbox::relay
