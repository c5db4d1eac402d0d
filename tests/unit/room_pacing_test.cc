#include "worker/room_pacing.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

namespace room_outbox::relay {
namespace {

using std::chrono::milliseconds;

TEST(RoomPacingTest, ARoomIsReadyOneGapAfterItsLastSend) {
  RoomPacing pacing(milliseconds(50));
  EXPECT_EQ(pacing.WaitMs("a", 1000), 0);
  pacing.Sent("a", 1000);
  EXPECT_EQ(pacing.WaitMs("a", 1020), 30);
  EXPECT_EQ(pacing.WaitMs("a", 1050), 0);
  EXPECT_EQ(pacing.WaitMs("b", 1020), 0) << "rooms are paced apart";
}

TEST(RoomPacingTest, TheShortestWaitAmongRooms) {
  RoomPacing pacing(milliseconds(50));
  pacing.Sent("a", 1000);
  pacing.Sent("b", 1030);
  const std::vector<std::string> rooms{"a", "b"};
  EXPECT_EQ(pacing.WaitMs(rooms, 1040), 10);
  EXPECT_EQ(pacing.WaitMs(std::vector<std::string>{}, 1040), 0);
}

TEST(RoomPacingTest, AClaimLearnsTheRoomsSentToLessThanAGapAgoAndTheirWait) {
  RoomPacing pacing(milliseconds(50));
  pacing.Sent("a", 1000);
  pacing.Sent("b", 1030);
  relay::ClaimOptions options;
  pacing.AddPaced(options, 1040);
  ASSERT_EQ(options.paced_rooms.size(), 2u);
  std::map<std::string, int64_t> waits;
  for (const relay::PacedRoom& room : options.paced_rooms) waits[room.room_id] = room.paced_for_ms;
  EXPECT_EQ(waits["a"], 10);
  EXPECT_EQ(waits["b"], 40);
  relay::ClaimOptions later;
  pacing.AddPaced(later, 1050);
  ASSERT_EQ(later.paced_rooms.size(), 1u) << "room a may be sent to again";
  EXPECT_EQ(later.paced_rooms[0].room_id, "b");
  RoomPacing off(milliseconds(0));
  off.Sent("a", 1000);
  relay::ClaimOptions none;
  off.AddPaced(none, 1000);
  EXPECT_TRUE(none.paced_rooms.empty());
}

TEST(RoomPacingTest, NoRoomMinIntervalMakesEveryRoomReadyAndCutsNothing) {
  RoomPacing pacing(milliseconds(0));
  EXPECT_FALSE(pacing.enabled());
  pacing.Sent("a", 1000);
  EXPECT_EQ(pacing.WaitMs("a", 1000), 0);
  relay::ClaimOptions options;
  pacing.CutRuns(options, milliseconds(1000));
  EXPECT_EQ(options.rooms.run_cut_rows, 0u);
  EXPECT_EQ(options.rooms.room_min_interval_ms, 0);
}

TEST(RoomPacingTest, AClaimCutsARoomAtOnePollIntervalOfSends) {
  relay::ClaimOptions options;
  RoomPacing(milliseconds(50)).CutRuns(options, milliseconds(1000));
  EXPECT_EQ(options.rooms.run_cut_rows, 20u);
  EXPECT_EQ(options.rooms.room_min_interval_ms, 50);
  relay::ClaimOptions slow;
  RoomPacing(milliseconds(400)).CutRuns(slow, milliseconds(200));
  EXPECT_EQ(slow.rooms.run_cut_rows, 1u) << "at least one row";
}

TEST(RoomPacingTest, ForgetDropsRoomsWhoseGapHasPassed) {
  RoomPacing pacing(milliseconds(50));
  pacing.Sent("a", 1000);
  pacing.Forget(1049);
  EXPECT_EQ(pacing.WaitMs("a", 1049), 1);
  pacing.Forget(1050);
  EXPECT_EQ(pacing.WaitMs("a", 1000), 0) << "forgotten";
}

TEST(RoomPacingTest, TheLoopIdlesOneGapWhileScheduledRowsComeDue) {
  RoomPacing pacing(milliseconds(50));
  EXPECT_EQ(pacing.IdleAfterDelivery(milliseconds(1000), 0), milliseconds(1000));
  pacing.Scheduled(/*claimed_at=*/10'000, /*paced_for_ms=*/120);
  EXPECT_EQ(pacing.IdleAfterDelivery(milliseconds(1000), 10'050), milliseconds(50));
  EXPECT_EQ(pacing.IdleAfterDelivery(milliseconds(1000), 10'120), milliseconds(1000));
  pacing.Scheduled(10'200, 0);  // nothing scheduled
  EXPECT_EQ(pacing.IdleAfterDelivery(milliseconds(1000), 10'200), milliseconds(1000));
}

TEST(RoomPacingTest, TheLongestSleepIsThePollIntervalOrTheGap) {
  EXPECT_EQ(RoomPacing(milliseconds(50)).MaxSleep(milliseconds(1000)), milliseconds(1000));
  EXPECT_EQ(RoomPacing(milliseconds(500)).MaxSleep(milliseconds(200)), milliseconds(500));
}

TEST(RoomPacingTest, ARefusedRoomsGapDoublesUpToItsCapAndTheOtherRoomsKeepTheirs) {
  RoomPacing pacing(milliseconds(25));
  pacing.Sent("hot", 1000);
  pacing.Sent("quiet", 1000);
  pacing.Refused("hot");
  EXPECT_EQ(pacing.GapMs("hot"), 50);
  EXPECT_EQ(pacing.WaitMs("hot", 1025), 25) << "the refused room waits its wider gap";
  EXPECT_EQ(pacing.WaitMs("quiet", 1025), 0) << "another room keeps room_min_interval";
  EXPECT_EQ(pacing.backed_off(), 1u);
  for (int i = 0; i < 10; ++i) pacing.Refused("hot");
  EXPECT_EQ(pacing.GapMs("hot"), 25 * kMaxGapFactor);
  relay::ClaimOptions options;
  pacing.AddPaced(options, 1100);
  ASSERT_EQ(options.paced_rooms.size(), 1u) << "quiet's gap has passed";
  EXPECT_EQ(options.paced_rooms[0].room_id, "hot");
  EXPECT_EQ(options.paced_rooms[0].paced_for_ms, 1000 + 25 * kMaxGapFactor - 1100);
}

TEST(RoomPacingTest, DeliveriesBringAWidenedGapBackToRoomMinInterval) {
  RoomPacing pacing(milliseconds(25));
  pacing.Refused("hot");
  pacing.Refused("hot");
  ASSERT_EQ(pacing.GapMs("hot"), 100);
  pacing.Delivered("hot");
  EXPECT_EQ(pacing.GapMs("hot"), 100 - 10) << "1/8 of the way back (75 / 8, rounded up)";
  int deliveries = 1;
  while (pacing.GapMs("hot") > 25 && deliveries < 100) {
    pacing.Delivered("hot");
    ++deliveries;
  }
  EXPECT_EQ(pacing.GapMs("hot"), 25);
  EXPECT_LT(deliveries, 40) << "back within a few dozen messages";
  EXPECT_EQ(pacing.backed_off(), 0u);
  pacing.Delivered("never-refused");
  EXPECT_EQ(pacing.GapMs("never-refused"), 25);
}

TEST(RoomPacingTest, AWidenedGapIsForgottenWhenTheRoomWentQuiet) {
  RoomPacing pacing(milliseconds(25));
  pacing.Sent("hot", 1000);
  pacing.Refused("hot");
  pacing.Forget(1000 + kGapMemory.count() - 1);
  EXPECT_EQ(pacing.GapMs("hot"), 50);
  pacing.Forget(1000 + kGapMemory.count());
  EXPECT_EQ(pacing.GapMs("hot"), 25);
  RoomPacing off(milliseconds(0));
  off.Refused("hot");
  EXPECT_EQ(off.backed_off(), 0u) << "no pacing, no backoff";
}

}  // namespace
}  // namespace room_outbox::relay
