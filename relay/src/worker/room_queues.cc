#include "worker/room_queues.h"

#include <unordered_set>

#include "core/envelope_codec.h"

namespace room_outbox::relay {

void RoomQueues::Load(std::span<const OutboxRow> rows,
                      const std::function<bool(const OutboxRow&)>& give_back) {
  items_.clear();
  items_.reserve(rows.size());  // QueuedRow pointers handed out later stay valid
  std::unordered_set<std::string> blocked;
  auto hold = [&](const OutboxRow& row) {
    if (per_room_order_) blocked.insert(row.room_id);
  };
  for (const OutboxRow& row : rows) {
    if (blocked.count(row.room_id) != 0) {
      released_.push_back(row.id);
      NoteHeldAtLoad(row.room_id);
      continue;
    }
    if (give_back && give_back(row)) {
      released_.push_back(row.id);
      hold(row);
      continue;
    }
    auto envelope = core::DecodeEnvelope(row.envelope, encoded_);
    if (!envelope) {
      undecodable_.push_back(UndecodableRow{&row, envelope.error().message});
      hold(row);
      continue;
    }
    std::string key = per_room_order_ ? row.room_id : "#" + std::to_string(row.id);
    QueuedRow& item =
        items_.emplace_back(QueuedRow{&row, std::move(*envelope), std::move(key), {}, {}});
    if (encoded_.text() == row.envelope) {
      item.envelope_json = row.envelope;
    } else {
      item.encoded = encoded_.text();  // items_ never reallocates (reserved): the view stays
      item.envelope_json = item.encoded;
    }
    Enqueue(items_.size() - 1);
  }
}

void RoomQueues::NoteHeldAtLoad(const std::string& room_id) {
  rooms_held_.insert(room_id);
  for (HeldRoom& held : held_at_load_) {
    if (held.room_id == room_id) {
      ++held.rows;
      return;
    }
  }
  held_at_load_.push_back(HeldRoom{room_id, 1});
}

void RoomQueues::Enqueue(size_t item) {
  auto [it, inserted] = queues_.try_emplace(items_[item].queue);
  if (inserted) keys_.push_back(items_[item].queue);
  it->second.push_back(item);
  ++remaining_;
}

std::vector<const QueuedRow*> RoomQueues::PopNeverSent(
    const std::function<bool(std::string_view)>& sends) {
  return PopFrontWhile([&](const QueuedRow& item) { return !sends(item.row->event_type); });
}

std::vector<const QueuedRow*> RoomQueues::PopFrontWhile(
    const std::function<bool(const QueuedRow&)>& take) {
  std::vector<const QueuedRow*> out;
  for (const std::string& key : keys_) {
    auto& queue = queues_[key];
    while (!queue.empty() && take(items_[queue.front()])) {
      out.push_back(&items_[queue.front()]);
      queue.pop_front();
      --remaining_;
    }
  }
  return out;
}

std::vector<const QueuedRow*> RoomQueues::NextWave(
    size_t max_rows, const std::function<bool(const std::string&)>& ready) {
  std::vector<const QueuedRow*> wave;
  for (const std::string& key : keys_) {
    if (wave.size() >= max_rows) break;
    auto& queue = queues_[key];
    if (queue.empty() || !ready(key)) continue;
    wave.push_back(&items_[queue.front()]);
    queue.pop_front();
    --remaining_;
  }
  return wave;
}

const QueuedRow* RoomQueues::PopFrontIf(const std::string& queue,
                                        const std::function<bool(const QueuedRow&)>& take) {
  auto it = queues_.find(queue);
  if (it == queues_.end() || it->second.empty() || !take(items_[it->second.front()])) {
    return nullptr;
  }
  const QueuedRow* front = &items_[it->second.front()];
  it->second.pop_front();
  --remaining_;
  return front;
}

std::vector<std::string> RoomQueues::QueuesLeft() const {
  std::vector<std::string> out;
  for (const std::string& key : keys_) {
    if (!queues_.at(key).empty()) out.push_back(key);
  }
  return out;
}

size_t RoomQueues::HoldBack(const QueuedRow& failed) {
  auto& queue = queues_[failed.queue];
  const size_t held = queue.size();
  if (held == 0) return 0;
  for (size_t i : queue) released_.push_back(items_[i].row->id);
  queue.clear();
  remaining_ -= held;
  rooms_held_.insert(failed.row->room_id);
  return held;
}

void RoomQueues::GiveBack(const QueuedRow& unsent) {
  released_.push_back(unsent.row->id);
  auto& queue = queues_[unsent.queue];
  for (size_t i : queue) released_.push_back(items_[i].row->id);
  remaining_ -= queue.size();
  queue.clear();
}

void RoomQueues::ReleaseAll() {
  for (const std::string& key : keys_) {
    auto& queue = queues_[key];
    for (size_t i : queue) released_.push_back(items_[i].row->id);
    queue.clear();
  }
  remaining_ = 0;
}

}  // namespace room_outbox::relay
