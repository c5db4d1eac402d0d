#include "worker/room_queues.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "core/envelope_codec.h"

namespace room_outbox::relay {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

relay::OutboxRow Row(int64_t id, const std::string& room,
                     const std::string& type = "RoomGiftSent") {
  Envelope e;
  e.event_id = "evt-" + std::to_string(id);
  e.event_type = type;
  e.room_id = room;
  e.room_seq = id;
  e.command_id = "cmd-" + std::to_string(id);
  e.node_id = "node-a";
  relay::OutboxRow row;
  row.id = id;
  row.event_id = e.event_id;
  row.event_type = type;
  row.room_id = room;
  row.envelope = core::EncodeEnvelope(e).value();
  return row;
}

std::vector<int64_t> Ids(const std::vector<const QueuedRow*>& rows) {
  std::vector<int64_t> ids;
  for (const QueuedRow* r : rows) ids.push_back(r->row->id);
  return ids;
}

auto AllReady = [](const std::string&) { return true; };
auto SendsAll = [](std::string_view) { return true; };
auto KeepAll = [](const relay::OutboxRow&) { return false; };

TEST(RoomQueuesTest, PerRoomWavesTakeOneRowPerRoomInIdOrder) {
  std::vector<relay::OutboxRow> rows{Row(1, "a"), Row(2, "a"), Row(3, "b"), Row(4, "a"),
                                     Row(5, "b")};
  RoomQueues queues(/*per_room_order=*/true);
  queues.Load(rows, KeepAll);
  EXPECT_EQ(queues.remaining(), 5u);
  EXPECT_THAT(Ids(queues.NextWave(16, AllReady)), ElementsAre(1, 3));
  EXPECT_THAT(Ids(queues.NextWave(16, AllReady)), ElementsAre(2, 5));
  EXPECT_THAT(Ids(queues.NextWave(16, AllReady)), ElementsAre(4));
  EXPECT_EQ(queues.remaining(), 0u);
  EXPECT_THAT(queues.NextWave(16, AllReady), IsEmpty());
}

TEST(RoomQueuesTest, ARowStoredAsTheHookEncodesItLendsItsTextAndAnotherIsEncodedOnce) {
  relay::OutboxRow loose = Row(2, "b");
  // Another writer's form of the same envelope: the body must carry the canonical encoding.
  loose.envelope.insert(1, " ");
  std::vector<relay::OutboxRow> rows{Row(1, "a"), loose};
  RoomQueues queues(true);
  queues.Load(rows, KeepAll);
  const std::vector<const QueuedRow*> wave = queues.NextWave(16, AllReady);
  ASSERT_THAT(Ids(wave), ElementsAre(1, 2));
  EXPECT_EQ(wave[0]->envelope_json, rows[0].envelope);
  EXPECT_EQ(wave[0]->envelope_json.data(), rows[0].envelope.data()) << "a view, not a copy";
  EXPECT_EQ(wave[1]->envelope_json, core::EncodeEnvelope(wave[1]->envelope).value())
      << "the canonical encoding, made once at load";
  EXPECT_NE(wave[1]->envelope_json, rows[1].envelope);
}

TEST(RoomQueuesTest, AWaveHoldsAtMostMaxRows) {
  std::vector<relay::OutboxRow> rows{Row(1, "a"), Row(2, "b"), Row(3, "c")};
  RoomQueues queues(true);
  queues.Load(rows, KeepAll);
  EXPECT_THAT(Ids(queues.NextWave(2, AllReady)), ElementsAre(1, 2));
  EXPECT_THAT(Ids(queues.NextWave(2, AllReady)), ElementsAre(3));
}

TEST(RoomQueuesTest, OrderingNoneQueuesEveryRowAlone) {
  std::vector<relay::OutboxRow> rows{Row(1, "a"), Row(2, "a"), Row(3, "a")};
  RoomQueues queues(/*per_room_order=*/false);
  queues.Load(rows, KeepAll);
  auto wave = queues.NextWave(16, AllReady);
  EXPECT_THAT(Ids(wave), ElementsAre(1, 2, 3));
  EXPECT_EQ(queues.HoldBack(*wave[0]), 0u) << "no order to keep";
}

TEST(RoomQueuesTest, RoomsThatAreNotReadyWait) {
  std::vector<relay::OutboxRow> rows{Row(1, "a"), Row(2, "b"), Row(3, "a")};
  RoomQueues queues(true);
  queues.Load(rows, KeepAll);
  EXPECT_THAT(Ids(queues.NextWave(16, [](const std::string& room) { return room == "b"; })),
              ElementsAre(2));
  EXPECT_THAT(queues.QueuesLeft(), ElementsAre("a"));
}

TEST(RoomQueuesTest, UndecodableRowsAreSetAsideAndBlockTheLaterRowsOfTheirRoom) {
  std::vector<relay::OutboxRow> rows{Row(1, "a"), Row(2, "a"), Row(3, "a"), Row(4, "a"),
                                     Row(5, "b")};
  rows[1].envelope = "{not json";
  RoomQueues queues(true);
  queues.Load(rows, KeepAll);
  ASSERT_EQ(queues.undecodable().size(), 1u);
  EXPECT_EQ(queues.undecodable()[0].row->id, 2);
  EXPECT_FALSE(queues.undecodable()[0].why.empty());
  // Row 1 comes before the undecodable row: it may still go out.
  EXPECT_THAT(queues.released(), ElementsAre(3, 4));
  ASSERT_EQ(queues.held_rooms().size(), 1u);
  EXPECT_EQ(queues.held_rooms()[0].room_id, "a");
  EXPECT_EQ(queues.held_rooms()[0].rows, 2u);
  EXPECT_EQ(queues.rooms_held(), 1u);
  EXPECT_THAT(Ids(queues.NextWave(16, AllReady)), ElementsAre(1, 5));
}

TEST(RoomQueuesTest, RowsGivenBackBlockTheirRoomLikeUndecodableOnes) {
  std::vector<relay::OutboxRow> rows{Row(1, "a"), Row(4, "a"), Row(5, "b")};
  RoomQueues queues(true);
  queues.Load(rows, [](const relay::OutboxRow& row) { return row.id == 1; });
  EXPECT_THAT(queues.released(), ElementsAre(1, 4));
  EXPECT_THAT(queues.undecodable(), IsEmpty());
  EXPECT_THAT(Ids(queues.NextWave(16, AllReady)), ElementsAre(5));
}

TEST(RoomQueuesTest, AnUndecodableRowWithNothingBehindItHoldsNoRoom) {
  std::vector<relay::OutboxRow> rows{Row(1, "a")};
  rows[0].envelope = "[]";
  RoomQueues queues(true);
  queues.Load(rows, KeepAll);
  EXPECT_THAT(queues.held_rooms(), IsEmpty());
  EXPECT_EQ(queues.rooms_held(), 0u);
}

TEST(RoomQueuesTest, NeverSentRowsArePoppedInOrderFromTheFrontOfEachQueue) {
  std::vector<relay::OutboxRow> rows{Row(1, "a", "RoomHeatChanged"), Row(2, "a"),
                                     Row(3, "a", "RoomHeatChanged"),
                                     Row(4, "b", "RoomRankChanged")};
  RoomQueues queues(true);
  queues.Load(rows, KeepAll);
  const std::set<std::string> never{"RoomHeatChanged", "RoomRankChanged"};
  auto sends = [&](std::string_view type) { return never.count(std::string(type)) == 0; };
  EXPECT_THAT(Ids(queues.PopNeverSent(sends)), ElementsAre(1, 4));
  EXPECT_THAT(Ids(queues.NextWave(16, AllReady)), ElementsAre(2));
  EXPECT_THAT(Ids(queues.PopNeverSent(sends)), ElementsAre(3));
  EXPECT_EQ(queues.remaining(), 0u);
}

TEST(RoomQueuesTest, AFailedRowReleasesTheLaterRowsOfItsRoomOnly) {
  std::vector<relay::OutboxRow> rows{Row(1, "a"), Row(2, "a"), Row(3, "b"), Row(4, "a"),
                                     Row(5, "b")};
  RoomQueues queues(true);
  queues.Load(rows, KeepAll);
  auto wave = queues.NextWave(16, AllReady);
  EXPECT_EQ(queues.HoldBack(*wave[0]), 2u);
  EXPECT_THAT(queues.released(), ElementsAre(2, 4));
  EXPECT_EQ(queues.rooms_held(), 1u);
  EXPECT_THAT(Ids(queues.NextWave(16, AllReady)), ElementsAre(5));
  EXPECT_EQ(queues.remaining(), 0u);
}

TEST(RoomQueuesTest, ReleaseAllGivesBackEveryRowLeft) {
  std::vector<relay::OutboxRow> rows{Row(1, "a"), Row(2, "a"), Row(3, "b")};
  RoomQueues queues(true);
  queues.Load(rows, KeepAll);
  queues.NextWave(1, AllReady);
  queues.ReleaseAll();
  EXPECT_THAT(queues.released(), ElementsAre(2, 3));
  EXPECT_EQ(queues.remaining(), 0u);
  EXPECT_THAT(queues.PopNeverSent(SendsAll), IsEmpty());
}

}  // namespace
}  // namespace room_outbox::relay
