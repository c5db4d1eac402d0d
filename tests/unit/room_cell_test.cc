#include "room_cell.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

namespace room_outbox::sim {
namespace {

std::vector<std::string> Types(RoomCell& cell, int n) {
  std::vector<std::string> types;
  for (int i = 0; i < n; ++i) {
    Applied applied = cell.Next(1000 + i);
    types.push_back(applied.command.command_type);
    cell.Accept(applied);
  }
  return types;
}

TEST(RoomCellTest, SameSeedGivesTheSameMix) {
  RoomCell a(5, 42, "run");
  RoomCell b(5, 42, "run");
  EXPECT_EQ(Types(a, 200), Types(b, 200));
  RoomCell c(5, 43, "run");
  EXPECT_NE(Types(a, 200), Types(c, 200));
}

TEST(RoomCellTest, EveryRoomStartsWithCreateAndSeqCountsItsCommands) {
  RoomCell cell(3, 7, "run");
  std::map<std::string, int64_t> seq;
  std::set<std::string> ids;
  std::set<std::string> kinds;
  for (int i = 0; i < 300; ++i) {
    Applied applied = cell.Next(i);
    const std::string& room = applied.command.room_id;
    if (!seq.contains(room)) {
      EXPECT_EQ(applied.command.command_type, "CreateRoom");
      ASSERT_EQ(applied.events.size(), 1u);
      EXPECT_EQ(applied.events[0].event_type, "RoomCreated");
    }
    EXPECT_EQ(applied.command.room_seq, ++seq[room]);
    EXPECT_TRUE(ids.insert(applied.command.command_id).second);
    for (const Event& event : applied.events) {
      EXPECT_TRUE(ids.insert(event.event_id).second) << event.event_id;
      EXPECT_EQ(event.room_seq, applied.command.room_seq);
      kinds.insert(event.event_type);
    }
    cell.Accept(applied);
  }
  EXPECT_EQ(kinds, (std::set<std::string>{"RoomCreated", "RoomUserJoined", "RoomHeatChanged",
                                          "RoomGiftSent", "RoomRankChanged", "RoomUserLeft"}));
}

TEST(RoomCellTest, OwnersShareTheRoomsOutWithoutOverlap) {
  for (const int owners : {1, 3, 4, 10}) {
    std::map<std::string, int> owner_of;
    int owned_total = 0;
    for (int owner = 0; owner < owners; ++owner) {
      owned_total += RoomCell::OwnedRooms(10, owner, owners);
      RoomCell cell(10, 5, "run", owner, owners);
      std::set<std::string> seen;
      for (int i = 0; i < 400; ++i) {
        Applied applied = cell.Next(i);
        const std::string& room = applied.command.room_id;
        const int number = std::stoi(room.substr(room.find('-') + 1));
        EXPECT_EQ(number % owners, owner) << room;
        EXPECT_TRUE(owner_of.emplace(room, owner).first->second == owner) << room;
        seen.insert(room);
        cell.Accept(applied);
      }
      EXPECT_EQ(static_cast<int>(seen.size()), RoomCell::OwnedRooms(10, owner, owners));
    }
    EXPECT_EQ(owned_total, 10) << owners;
    EXPECT_EQ(owner_of.size(), 10u) << owners;  // every room has its owner
  }
}

TEST(RoomCellTest, StateChangesOnlyWhenAccepted) {
  RoomCell cell(1, 1, "run");
  Applied create = cell.Next(0);
  EXPECT_TRUE(cell.rooms().empty());
  cell.Accept(create);
  Applied join = cell.Next(1);
  ASSERT_EQ(join.command.command_type, "JoinRoom");
  EXPECT_TRUE(cell.rooms().at("room-1").members.empty());
  EXPECT_EQ(join.next.members.size(), 1u);
  EXPECT_NE(join.snapshot.find("\"members\":[\"user-0\"]"), std::string::npos) << join.snapshot;
  cell.Accept(join);
  EXPECT_EQ(cell.rooms().at("room-1").members.size(), 1u);
  EXPECT_EQ(cell.rooms().at("room-1").seq, 2);
}

}  // namespace
}  // namespace room_outbox::sim
