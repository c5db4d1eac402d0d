// RoomQueues: a claim's rows in the order they may be sent.
//
// Load decodes every row. An undecodable row is not queued (the worker records it as a failed
// attempt). With ordering = per_room each room has one queue in id order, and a room whose row
// is not attempted in this round (undecodable, or given back by the caller's `give_back`, e.g.
// already tried in this --once run) is blocked from that row on: its later rows are released
// (not attempted, so they never overtake it). With ordering = none every row is its own queue.
//
// A wave takes the front row of each ready queue, at most `max_rows` of them, so it holds at
// most one row per room. Rows of types that are never sent, and expired rows, are popped
// separately, in order, from the front of the queues (they need no send slot). When a sent row
// fails, HoldBack releases the later rows of its queue; when a popped row was not attempted after
// all (the IM circuit breaker kept it back), GiveBack releases it with the rest of its queue.
//
// The queues point into the claim's rows: keep the claim alive and unchanged while they live.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/json_writer.h"
#include "room_outbox/envelope.h"
#include "store/relay_store.h"

namespace room_outbox::relay {

struct QueuedRow {
  const OutboxRow* row = nullptr;
  Envelope envelope;
  std::string queue;  // the room id (per_room) or a key of this row alone (none)
  // EncodeEnvelope(envelope), what the IM body carries: the row's stored text when it is that
  // (as the hook writes every row), else `encoded`.
  std::string_view envelope_json;
  std::string encoded;     // EncodeEnvelope(envelope) when the stored text is not it; else empty
  size_t queue_index = 0;  // its queue's place in the claim's order (set by RoomQueues)
};

struct UndecodableRow {
  const OutboxRow* row = nullptr;
  std::string why;
};

// A room blocked in this claim, and how many of its rows were released for it.
struct HeldRoom {
  std::string room_id;
  uint64_t rows = 0;
};

class RoomQueues {
 public:
  explicit RoomQueues(bool per_room_order) : per_room_order_(per_room_order) {}
  RoomQueues(const RoomQueues&) = delete;
  RoomQueues& operator=(const RoomQueues&) = delete;

  void Load(std::span<const OutboxRow> rows,
            const std::function<bool(const OutboxRow&)>& give_back);

  const std::vector<UndecodableRow>& undecodable() const { return undecodable_; }
  // Rooms blocked at Load, in the order of their first blocked row.
  const std::vector<HeldRoom>& held_rooms() const { return held_at_load_; }
  // Distinct rooms held back in this claim (at Load or by HoldBack).
  size_t rooms_held() const { return rooms_held_.size(); }
  // Ids of rows that will not be attempted: given back, held, or released since.
  const std::vector<int64_t>& released() const { return released_; }
  size_t remaining() const { return remaining_; }

  // Pops the rows at the front of every queue whose type is never sent (sends() false).
  std::vector<const QueuedRow*> PopNeverSent(const std::function<bool(std::string_view)>& sends);
  // Pops the rows at the front of every queue while `take` says so, in each queue's order (the
  // rows that need no send: never-sent types, expired rows). `take` sees each row once.
  std::vector<const QueuedRow*> PopFrontWhile(const std::function<bool(const QueuedRow&)>& take);
  // Pops the next wave: the front row of each queue whose room is `ready`, at most max_rows.
  std::vector<const QueuedRow*> NextWave(size_t max_rows,
                                         const std::function<bool(const std::string&)>& ready);
  // A room's next row to send, walking the queues in the claim's order: for each queue with rows
  // whose room `open` accepts, the rows at its front that `unsent` takes are popped (and handed
  // to `settle`, in order); then the front row of the first such queue that `ready` also accepts
  // is popped and returned. nullptr when none is.
  const QueuedRow* PopNextToSend(const std::function<bool(const std::string&)>& open,
                                 const std::function<bool(const QueuedRow&)>& unsent,
                                 const std::function<void(const QueuedRow&)>& settle,
                                 const std::function<bool(const std::string&)>& ready);
  // Pops the front row of `queue` when `take` says so (a pack's next row, PackRule); nullptr
  // otherwise.
  const QueuedRow* PopFrontIf(const std::string& queue,
                              const std::function<bool(const QueuedRow&)>& take);
  // Rooms (queue keys) that still have rows.
  std::vector<std::string> QueuesLeft() const;
  // Calls `visit` with each room (queue key) that still has rows, in the claim's order.
  void ForEachQueueLeft(const std::function<void(const std::string&)>& visit) const;
  // `failed` was attempted and failed: the later rows of its queue are released. Returns how
  // many (always 0 with ordering = none).
  size_t HoldBack(const QueuedRow& failed);
  // `unsent` was popped but not attempted: it and the later rows of its queue are released
  // (retry_count unchanged); the room does not count as held back.
  void GiveBack(const QueuedRow& unsent);
  // Releases every row left.
  void ReleaseAll();

 private:
  // One room's rows (indexes into items_) in the order they may be sent.
  struct Queue {
    std::string key;
    std::deque<size_t> rows;
  };

  void Enqueue(size_t item);
  void NoteHeldAtLoad(const std::string& room_id);
  // Takes the queue's front row off it.
  const QueuedRow* PopFront(Queue& queue);

  bool per_room_order_;
  std::vector<QueuedRow> items_;
  std::vector<Queue> queues_;                      // in the order of each queue's first row
  std::unordered_map<std::string, size_t> index_;  // queue key -> its place in queues_
  std::vector<UndecodableRow> undecodable_;
  std::vector<HeldRoom> held_at_load_;
  std::unordered_set<std::string> rooms_held_;
  std::vector<int64_t> released_;
  core::JsonWriter encoded_;  // each row's envelope as EncodeEnvelope writes it, reused
  size_t remaining_ = 0;
};

}  // namespace room_outbox::relay
