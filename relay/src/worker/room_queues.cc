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
  QueuedRow& row = items_[item];
  auto [it, inserted] = index_.try_emplace(row.queue, queues_.size());
  if (inserted) queues_.push_back(Queue{row.queue, {}});
  row.queue_index = it->second;
  queues_[it->second].rows.push_back(item);
  ++remaining_;
}

const QueuedRow* RoomQueues::PopFront(Queue& queue) {
  const QueuedRow* front = &items_[queue.rows.front()];
  queue.rows.pop_front();
  --remaining_;
  return front;
}

std::vector<const QueuedRow*> RoomQueues::PopNeverSent(
    const std::function<bool(std::string_view)>& sends) {
  return PopFrontWhile([&](const QueuedRow& item) { return !sends(item.row->event_type); });
}

std::vector<const QueuedRow*> RoomQueues::PopFrontWhile(
    const std::function<bool(const QueuedRow&)>& take) {
  std::vector<const QueuedRow*> out;
  for (Queue& queue : queues_) {
    while (!queue.rows.empty() && take(items_[queue.rows.front()])) {
      out.push_back(PopFront(queue));
    }
  }
  return out;
}

std::vector<const QueuedRow*> RoomQueues::NextWave(
    size_t max_rows, const std::function<bool(const std::string&)>& ready) {
  std::vector<const QueuedRow*> wave;
  for (Queue& queue : queues_) {
    if (wave.size() >= max_rows) break;
    if (queue.rows.empty() || !ready(queue.key)) continue;
    wave.push_back(PopFront(queue));
  }
  return wave;
}

const QueuedRow* RoomQueues::PopNextToSend(const std::function<bool(const std::string&)>& open,
                                           const std::function<bool(const QueuedRow&)>& unsent,
                                           const std::function<void(const QueuedRow&)>& settle,
                                           const std::function<bool(const std::string&)>& ready) {
  for (Queue& queue : queues_) {
    if (queue.rows.empty() || !open(queue.key)) continue;
    while (!queue.rows.empty() && unsent(items_[queue.rows.front()])) {
      settle(*PopFront(queue));
    }
    if (!queue.rows.empty() && ready(queue.key)) return PopFront(queue);
  }
  return nullptr;
}

const QueuedRow* RoomQueues::PopFrontIf(const std::string& queue,
                                        const std::function<bool(const QueuedRow&)>& take) {
  auto it = index_.find(queue);
  if (it == index_.end()) return nullptr;
  Queue& q = queues_[it->second];
  if (q.rows.empty() || !take(items_[q.rows.front()])) return nullptr;
  return PopFront(q);
}

std::vector<std::string> RoomQueues::QueuesLeft() const {
  std::vector<std::string> out;
  ForEachQueueLeft([&](const std::string& key) { out.push_back(key); });
  return out;
}

void RoomQueues::ForEachQueueLeft(const std::function<void(const std::string&)>& visit) const {
  for (const Queue& queue : queues_) {
    if (!queue.rows.empty()) visit(queue.key);
  }
}

size_t RoomQueues::HoldBack(const QueuedRow& failed) {
  Queue& queue = queues_[failed.queue_index];
  const size_t held = queue.rows.size();
  if (held == 0) return 0;
  for (size_t i : queue.rows) released_.push_back(items_[i].row->id);
  queue.rows.clear();
  remaining_ -= held;
  rooms_held_.insert(failed.row->room_id);
  return held;
}

void RoomQueues::GiveBack(const QueuedRow& unsent) {
  released_.push_back(unsent.row->id);
  Queue& queue = queues_[unsent.queue_index];
  for (size_t i : queue.rows) released_.push_back(items_[i].row->id);
  remaining_ -= queue.rows.size();
  queue.rows.clear();
}

void RoomQueues::ReleaseAll() {
  for (Queue& queue : queues_) {
    for (size_t i : queue.rows) released_.push_back(items_[i].row->id);
    queue.rows.clear();
  }
  remaining_ = 0;
}

}  // namespace room_outbox::relay
