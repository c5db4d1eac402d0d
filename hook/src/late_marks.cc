#include "late_marks.h"

namespace room_outbox::internal {

void LateMarks::Keep(const std::string& token, std::span<const int64_t> ids) {
  if (ids.empty()) {
    return;
  }
  size_t dropped = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (held_.empty() || held_.back().token != token) {
      held_.push_back(Held{token, {}});
    }
    held_.back().ids.insert(held_.back().ids.end(), ids.begin(), ids.end());
    held_rows_ += ids.size();
    waiting_.fetch_add(ids.size(), std::memory_order_relaxed);
    dropped = DropOverBound();
  }
  WarnDropped(dropped);
}

core::Result<size_t> LateMarks::Write(HookStore& store, size_t max_writes) {
  size_t marked_rows = 0;
  for (size_t n = 0; n < max_writes; ++n) {
    Held batch;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (held_.empty()) {
        break;
      }
      batch = std::move(held_.front());
      held_.pop_front();
      held_rows_ -= batch.ids.size();  // still waiting_ while being written
    }
    auto marked = store.MarkPublished(batch.token, batch.ids);
    if (!marked) {
      size_t dropped = 0;
      {
        std::lock_guard<std::mutex> lock(mu_);
        held_rows_ += batch.ids.size();
        held_.push_front(std::move(batch));
        dropped = DropOverBound();
      }
      WarnDropped(dropped);
      return core::Fail(marked.error());
    }
    waiting_.fetch_sub(batch.ids.size(), std::memory_order_relaxed);
    marked_rows += *marked;
    if (counters_ != nullptr) counters_->AddLateMarksWritten(*marked);
  }
  return marked_rows;
}

size_t LateMarks::DropOverBound() {
  size_t dropped = 0;
  while (held_rows_ > max_rows_ && !held_.empty()) {
    Held& oldest = held_.front();
    const size_t over = std::min(held_rows_ - max_rows_, oldest.ids.size());
    oldest.ids.erase(oldest.ids.begin(), oldest.ids.begin() + static_cast<std::ptrdiff_t>(over));
    if (oldest.ids.empty()) {
      held_.pop_front();
    }
    held_rows_ -= over;
    dropped += over;
  }
  waiting_.fetch_sub(dropped, std::memory_order_relaxed);
  if (counters_ != nullptr && dropped > 0) counters_->AddLateMarksDropped(dropped);
  return dropped;
}

void LateMarks::WarnDropped(size_t dropped) const {
  if (dropped > 0 && log_) {
    log_(LogLevel::kWarn, "late marks full (" + std::to_string(max_rows_) +
                              " rows): dropped the marks of the " + std::to_string(dropped) +
                              " oldest rows, the relay may send them again after their lease");
  }
}

}  // namespace room_outbox::internal
