#include "worker/room_pace.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

namespace room_outbox::relay {
namespace {

using std::chrono::milliseconds;

TEST(RoomPaceTest, ARoomIsReadyOneGapAfterItsLastSend) {
  RoomPace pace(milliseconds(50));
  EXPECT_EQ(pace.WaitMs("a", 1000), 0);
  pace.Sent("a", 1000);
  EXPECT_EQ(pace.WaitMs("a", 1020), 30);
  EXPECT_EQ(pace.WaitMs("a", 1050), 0);
  EXPECT_EQ(pace.WaitMs("b", 1020), 0) << "rooms are paced apart";
}

TEST(RoomPaceTest, TheShortestWaitAmongRooms) {
  RoomPace pace(milliseconds(50));
  pace.Sent("a", 1000);
  pace.Sent("b", 1030);
  const std::vector<std::string> rooms{"a", "b"};
  EXPECT_EQ(pace.WaitMs(rooms, 1040), 10);
  EXPECT_EQ(pace.WaitMs(std::vector<std::string>{}, 1040), 0);
}

TEST(RoomPaceTest, AClaimLearnsTheRoomsSentToLessThanAGapAgoAndTheirWait) {
  RoomPace pace(milliseconds(50));
  pace.Sent("a", 1000);
  pace.Sent("b", 1030);
  ClaimOptions options;
  pace.AddPaced(options, 1040);
  ASSERT_EQ(options.paced_rooms.size(), 2u);
  std::map<std::string, int64_t> waits;
  for (const PacedRoom& room : options.paced_rooms) waits[room.room_id] = room.paced_for_ms;
  EXPECT_EQ(waits["a"], 10);
  EXPECT_EQ(waits["b"], 40);
  ClaimOptions later;
  pace.AddPaced(later, 1050);
  ASSERT_EQ(later.paced_rooms.size(), 1u) << "room a may be sent to again";
  EXPECT_EQ(later.paced_rooms[0].room_id, "b");
  RoomPace off(milliseconds(0));
  off.Sent("a", 1000);
  ClaimOptions none;
  off.AddPaced(none, 1000);
  EXPECT_TRUE(none.paced_rooms.empty());
}

TEST(RoomPaceTest, DisabledPaceMakesEveryRoomReadyAndCutsNothing) {
  RoomPace pace(milliseconds(0));
  EXPECT_FALSE(pace.enabled());
  pace.Sent("a", 1000);
  EXPECT_EQ(pace.WaitMs("a", 1000), 0);
  ClaimOptions options;
  pace.CutRuns(options, milliseconds(1000));
  EXPECT_EQ(options.run_cut_rows, 0u);
  EXPECT_EQ(options.room_min_interval_ms, 0);
}

TEST(RoomPaceTest, AClaimCutsARoomAtOnePollIntervalOfSends) {
  ClaimOptions options;
  RoomPace(milliseconds(50)).CutRuns(options, milliseconds(1000));
  EXPECT_EQ(options.run_cut_rows, 20u);
  EXPECT_EQ(options.room_min_interval_ms, 50);
  ClaimOptions slow;
  RoomPace(milliseconds(400)).CutRuns(slow, milliseconds(200));
  EXPECT_EQ(slow.run_cut_rows, 1u) << "at least one row";
}

TEST(RoomPaceTest, ForgetDropsRoomsWhoseGapHasPassed) {
  RoomPace pace(milliseconds(50));
  pace.Sent("a", 1000);
  pace.Forget(1049);
  EXPECT_EQ(pace.WaitMs("a", 1049), 1);
  pace.Forget(1050);
  EXPECT_EQ(pace.WaitMs("a", 1000), 0) << "forgotten";
}

TEST(RoomPaceTest, TheLoopIdlesOneGapWhileScheduledRowsComeDue) {
  RoomPace pace(milliseconds(50));
  EXPECT_EQ(pace.IdleAfterDelivery(milliseconds(1000), 0), milliseconds(1000));
  pace.Scheduled(/*claimed_at=*/10'000, /*paced_for_ms=*/120);
  EXPECT_EQ(pace.IdleAfterDelivery(milliseconds(1000), 10'050), milliseconds(50));
  EXPECT_EQ(pace.IdleAfterDelivery(milliseconds(1000), 10'120), milliseconds(1000));
  pace.Scheduled(10'200, 0);  // nothing scheduled
  EXPECT_EQ(pace.IdleAfterDelivery(milliseconds(1000), 10'200), milliseconds(1000));
}

TEST(RoomPaceTest, TheLongestSleepIsThePollIntervalOrTheGap) {
  EXPECT_EQ(RoomPace(milliseconds(50)).MaxSleep(milliseconds(1000)), milliseconds(1000));
  EXPECT_EQ(RoomPace(milliseconds(500)).MaxSleep(milliseconds(200)), milliseconds(500));
}

}  // namespace
}  // namespace room_outbox::relay
