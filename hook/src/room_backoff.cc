#include "room_backoff.h"

#include <algorithm>
#include <utility>

namespace room_outbox::internal {

bool RoomBackoff::BackedOff(const std::string& room_id) {
  if (size_.load(std::memory_order_relaxed) == 0) {
    return false;
  }
  const int64_t now = clock_.SteadyMs();
  std::lock_guard<std::mutex> lock(mu_);
  auto it = rooms_.find(room_id);
  return it != rooms_.end() && now < it->second.until_ms;
}

std::chrono::milliseconds RoomBackoff::Refused(const std::string& room_id) {
  const int64_t now = clock_.SteadyMs();
  const int64_t first = kFirstBackoff.count();
  const int64_t most = kMaxBackoff.count();
  std::lock_guard<std::mutex> lock(mu_);
  auto it = rooms_.find(room_id);
  if (it != rooms_.end() && now >= it->second.until_ms + most) {
    Forget(it);  // over for long enough: this refusal starts afresh
    it = rooms_.end();
  }
  if (it == rooms_.end()) {
    if (rooms_.size() >= max_rooms_) {
      Forget(rooms_.find(order_.front()));
    }
    order_.push_back(room_id);
    it = rooms_.emplace(room_id, Entry{first, now + first, std::prev(order_.end())}).first;
    size_.store(rooms_.size(), std::memory_order_relaxed);
    return kFirstBackoff;
  }
  Entry& entry = it->second;
  entry.backoff_ms = std::min(entry.backoff_ms * 2, most);
  entry.until_ms = now + entry.backoff_ms;
  order_.splice(order_.end(), order_, entry.order);
  return std::chrono::milliseconds(entry.backoff_ms);
}

void RoomBackoff::Delivered(const std::string& room_id) {
  if (size_.load(std::memory_order_relaxed) == 0) {
    return;
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = rooms_.find(room_id); it != rooms_.end()) {
    Forget(it);
  }
}

size_t RoomBackoff::rooms() const {
  std::lock_guard<std::mutex> lock(mu_);
  return rooms_.size();
}

void RoomBackoff::Forget(Table::iterator it) {
  order_.erase(it->second.order);
  rooms_.erase(it);
  size_.store(rooms_.size(), std::memory_order_relaxed);
}

void NoteRoomOutcome(RoomBackoff& backoff, const std::string& room_id,
                     const core::PublishOutcome& outcome, const LogCallback& log) {
  if (outcome.status == core::PublishStatus::kPublished) {
    backoff.Delivered(room_id);
    return;
  }
  if (outcome.scope != core::FailureScope::kRoom) {
    return;
  }
  const std::chrono::milliseconds opened = backoff.Refused(room_id);
  if (log) {
    log(LogLevel::kWarn,
        "room backoff open, its events go to the relay meanwhile: room_id=" + room_id +
            " backoff_ms=" + std::to_string(opened.count()) + " error=" + outcome.error);
  }
}

}  // namespace room_outbox::internal
