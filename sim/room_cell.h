// A small in-memory room cell: the sample room-service that room-sim drives. It applies room
// commands to in-memory state and yields the command-log entry, the events to publish and the
// snapshot to persist, exactly what a real room-service hands to the hook.
#pragma once

#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "room_outbox/hook.h"

namespace room_outbox::sim {

struct RoomState {
  int64_t seq = 0;  // bumped once per applied command
  std::set<std::string> members;
  int64_t heat = 0;
  std::map<std::string, int64_t> gifts_by_user;  // the rank
};

// What one applied command produces.
struct Applied {
  Command command;
  std::vector<Event> events;
  std::string snapshot;  // the room's state after the command, as JSON
  RoomState next;        // the room's state after the command
};

// Applies a deterministic mix of commands (CreateRoom, JoinRoom, SendGift, LeaveRoom, heat and
// rank changes as events) over the rooms it owns, seeded by `seed`. Rooms are "room-1" ..
// "room-<rooms>"; a cell owns room r when r % owners == owner (owner 0 of 1 owns them all), so
// cells built with the same `rooms` and `owners` and each owner index share no room. Ids are
// "<run_id>-c<n>" for commands and "<command_id>-e<k>" for events, so one run_id never repeats
// an id.
class RoomCell {
 public:
  RoomCell(int rooms, uint64_t seed, std::string run_id, int owner = 0, int owners = 1);

  // How many of `rooms` rooms the owner `owner` of `owners` owns.
  static int OwnedRooms(int rooms, int owner, int owners);

  // The next command of the mix, computed against the in-memory state without changing it.
  Applied Next(int64_t now_ms);

  // Installs the command's new room state: call once its commit succeeded (persist first,
  // then replace the in-memory state).
  void Accept(const Applied& applied);

  const std::map<std::string, RoomState>& rooms() const { return rooms_; }

 private:
  Applied Create(const std::string& room_id, int64_t now_ms);
  Applied Join(const std::string& room_id, int64_t now_ms);
  Applied Gift(const std::string& room_id, int64_t now_ms);
  Applied Leave(const std::string& room_id, int64_t now_ms);
  Applied Begin(const std::string& room_id, const char* type, std::string payload);
  void AddEvent(Applied& applied, const char* type, std::string payload, int64_t now_ms);
  static std::string Snapshot(const RoomState& room);

  std::vector<int> owned_;  // the numbers of the rooms this cell owns, ascending
  std::mt19937_64 random_;
  std::string run_id_;
  int64_t next_command_ = 0;
  int64_t next_user_ = 0;
  std::map<std::string, RoomState> rooms_;
};

}  // namespace room_outbox::sim
