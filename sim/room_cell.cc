#include "room_cell.h"

#include <nlohmann/json.hpp>

namespace room_outbox::sim {

using nlohmann::json;

RoomCell::RoomCell(int rooms, uint64_t seed, std::string run_id, int owner, int owners)
    : random_(seed), run_id_(std::move(run_id)) {
  owners = owners < 1 ? 1 : owners;
  for (int r = owner < 1 ? owners : owner; r <= rooms; r += owners) {
    owned_.push_back(r);  // r % owners == owner
  }
  if (owned_.empty()) {
    // Only when rooms < owners, which room-sim refuses: the first room this owner would own.
    owned_.push_back(owner < 1 ? owners : owner);
  }
}

int RoomCell::OwnedRooms(int rooms, int owner, int owners) {
  owners = owners < 1 ? 1 : owners;
  const int first = owner < 1 ? owners : owner;  // the owner's lowest room number
  return first > rooms ? 0 : (rooms - first) / owners + 1;
}

Applied RoomCell::Next(int64_t now_ms) {
  std::uniform_int_distribution<int> pick_room(1, static_cast<int>(owned_.size()));
  std::string room_id = "room-" + std::to_string(owned_[pick_room(random_) - 1]);
  if (!rooms_.contains(room_id)) {
    return Create(room_id, now_ms);
  }
  const RoomState& room = rooms_.at(room_id);
  std::uniform_int_distribution<int> pick(0, 99);
  int roll = pick(random_);
  if (room.members.empty() || roll < 35) {
    return Join(room_id, now_ms);
  }
  if (roll < 85) {
    return Gift(room_id, now_ms);
  }
  return Leave(room_id, now_ms);
}

Applied RoomCell::Begin(const std::string& room_id, const char* type, std::string payload) {
  Applied applied;
  auto it = rooms_.find(room_id);
  if (it != rooms_.end()) {
    applied.next = it->second;
  }
  RoomState& room = applied.next;
  room.seq++;
  applied.command.command_id = run_id_ + "-c" + std::to_string(next_command_++);
  applied.command.room_id = room_id;
  applied.command.command_type = type;
  applied.command.request_id = "req-" + applied.command.command_id;
  applied.command.room_seq = room.seq;
  applied.command.payload = std::move(payload);
  return applied;
}

void RoomCell::Accept(const Applied& applied) { rooms_[applied.command.room_id] = applied.next; }

void RoomCell::AddEvent(Applied& applied, const char* type, std::string payload, int64_t now_ms) {
  Event event;
  event.event_id = applied.command.command_id + "-e" + std::to_string(applied.events.size());
  event.event_type = type;
  event.room_seq = applied.command.room_seq;
  event.occurred_at_ms = now_ms;
  event.payload = std::move(payload);
  applied.events.push_back(std::move(event));
}

Applied RoomCell::Create(const std::string& room_id, int64_t now_ms) {
  Applied applied = Begin(room_id, "CreateRoom", json{{"room_id", room_id}}.dump());
  AddEvent(applied, "RoomCreated", json{{"room_id", room_id}}.dump(), now_ms);
  applied.snapshot = Snapshot(applied.next);
  return applied;
}

Applied RoomCell::Join(const std::string& room_id, int64_t now_ms) {
  std::string user = "user-" + std::to_string(next_user_++);
  Applied applied = Begin(room_id, "JoinRoom", json{{"user_id", user}}.dump());
  RoomState& room = applied.next;
  room.members.insert(user);
  room.heat += 1;
  AddEvent(applied, "RoomUserJoined",
           json{{"user_id", user}, {"members", room.members.size()}}.dump(), now_ms);
  AddEvent(applied, "RoomHeatChanged", json{{"heat", room.heat}}.dump(), now_ms);
  applied.snapshot = Snapshot(applied.next);
  return applied;
}

Applied RoomCell::Gift(const std::string& room_id, int64_t now_ms) {
  const RoomState& room = rooms_.at(room_id);
  std::uniform_int_distribution<size_t> pick_member(0, room.members.size() - 1);
  auto it = room.members.begin();
  std::advance(it, pick_member(random_));
  std::string user = *it;
  std::uniform_int_distribution<int> pick_value(1, 100);
  int value = pick_value(random_);
  Applied applied = Begin(room_id, "SendGift", json{{"user_id", user}, {"value", value}}.dump());
  RoomState& same = applied.next;
  same.heat += value;
  same.gifts_by_user[user] += value;
  AddEvent(applied, "RoomGiftSent",
           json{{"user_id", user}, {"gift", "rose"}, {"value", value}}.dump(), now_ms);
  AddEvent(applied, "RoomHeatChanged", json{{"heat", same.heat}}.dump(), now_ms);
  AddEvent(applied, "RoomRankChanged",
           json{{"user_id", user}, {"total", same.gifts_by_user[user]}}.dump(), now_ms);
  applied.snapshot = Snapshot(applied.next);
  return applied;
}

Applied RoomCell::Leave(const std::string& room_id, int64_t now_ms) {
  std::string user = *rooms_.at(room_id).members.begin();
  Applied applied = Begin(room_id, "LeaveRoom", json{{"user_id", user}}.dump());
  RoomState& same = applied.next;
  same.members.erase(user);
  AddEvent(applied, "RoomUserLeft",
           json{{"user_id", user}, {"members", same.members.size()}}.dump(), now_ms);
  applied.snapshot = Snapshot(applied.next);
  return applied;
}

std::string RoomCell::Snapshot(const RoomState& room) {
  return json{{"seq", room.seq},
              {"members", room.members},
              {"heat", room.heat},
              {"gifts_by_user", room.gifts_by_user}}
      .dump();
}

}  // namespace room_outbox::sim
