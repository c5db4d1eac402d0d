// PlanClaim over plain vectors: runs from room heads, cuts and interval slots, rows of skipped
// types, push-backs behind waiting rows, extensions, and the batch limit. No database.
#include "store/claim_plan.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>

namespace room_outbox {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr int64_t kNow = 1'000'000;

relay::PlanRow Row(int64_t id, const std::string& room, int64_t next_attempt_at_ms = kNow - 1,
                   const std::string& type = "RoomGiftSent", bool leased = false) {
  return relay::PlanRow{id, room, type, next_attempt_at_ms, leased, 0, {}};
}

relay::PlanOptions Options(size_t limit = 100) {
  relay::PlanOptions options;
  options.server_now_ms = kNow;
  options.limit = limit;
  return options;
}

// Input whose window locked `locked` and whose rooms' pending prefixes are `pending`.
relay::PlanInput Input(std::vector<relay::PlanRow> locked, std::vector<relay::PlanRow> pending) {
  relay::PlanInput input;
  input.window_rows = locked.size();
  input.locked = std::move(locked);
  for (relay::PlanRow& row : pending) input.pending[row.room_id].push_back(row);
  return input;
}

std::vector<std::pair<int64_t, int64_t>> Scheduled(const relay::ClaimPlan& plan) {
  std::vector<std::pair<int64_t, int64_t>> out;
  for (const relay::PlannedSchedule& s : plan.schedule)
    out.emplace_back(s.id, s.next_attempt_at_ms);
  return out;
}

TEST(ClaimPlanTest, RunsFromEachRoomsHeadAreLeased) {
  auto input = Input({Row(3, "b"), Row(1, "a"), Row(2, "a"), Row(4, "b")},
                     {Row(1, "a"), Row(2, "a"), Row(3, "b"), Row(4, "b")});
  relay::ClaimPlan plan = relay::PlanClaim(Options(), input);
  EXPECT_THAT(plan.lease, ElementsAre(1, 2, 3, 4));
  EXPECT_THAT(plan.schedule, IsEmpty());
  EXPECT_THAT(plan.extensions, IsEmpty());
  EXPECT_FALSE(plan.more_due);
}

TEST(ClaimPlanTest, RowsBehindAHeadLeasedElsewhereAreLeftAlone) {
  // Row 1 is in flight with another claim: it is published soon, so rows 2 and 3 keep their time.
  auto input = Input({Row(2, "a"), Row(3, "a")},
                     {Row(1, "a", kNow + 30'000, "RoomGiftSent", true), Row(2, "a"), Row(3, "a")});
  relay::ClaimPlan plan = relay::PlanClaim(Options(), input);
  EXPECT_THAT(plan.lease, IsEmpty());
  EXPECT_THAT(plan.schedule, IsEmpty());
}

TEST(ClaimPlanTest, RowsBehindAHeadWhoseLeaseRanOutSortBehindIt) {
  // Row 1's relay died: its lease ended (kNow - 10), so it is due; rows 2, 3 came due before it
  // and would keep it out of every window. They take its time.
  auto input =
      Input({Row(2, "a", 0), Row(3, "a", 0)},
            {Row(1, "a", kNow - 10, "RoomGiftSent", true), Row(2, "a", 0), Row(3, "a", 0)});
  relay::ClaimPlan plan = relay::PlanClaim(Options(2), input);
  EXPECT_THAT(plan.lease, IsEmpty());
  EXPECT_THAT(Scheduled(plan), ElementsAre(std::pair<int64_t, int64_t>{2, kNow - 10},
                                           std::pair<int64_t, int64_t>{3, kNow - 10}));
  ASSERT_EQ(plan.extensions.size(), 1u) << "the run may start at the head whose lease ran out";
}

TEST(ClaimPlanTest, AHeldRowBreaksTheRun) {
  // Row 2 is leased to another claim: the run is row 1 only; row 3 must not overtake row 2.
  auto input = Input(
      {Row(1, "a"), Row(3, "a"), Row(4, "b")},
      {Row(1, "a"), Row(2, "a", kNow + 30'000, "RoomGiftSent", true), Row(3, "a"), Row(4, "b")});
  relay::ClaimPlan plan = relay::PlanClaim(Options(), input);
  EXPECT_THAT(plan.lease, ElementsAre(1, 4));
  EXPECT_THAT(plan.schedule, IsEmpty());
}

TEST(ClaimPlanTest, RowsBehindAFailedHeadArePushedToItsRetryTime) {
  const int64_t retry_at = kNow + 5'000;
  auto input = Input({Row(2, "a"), Row(3, "a"), Row(9, "b")},
                     {Row(1, "a", retry_at), Row(2, "a"), Row(3, "a"), Row(9, "b")});
  relay::ClaimPlan plan = relay::PlanClaim(Options(), input);
  EXPECT_THAT(plan.lease, ElementsAre(9));
  EXPECT_THAT(Scheduled(plan), ElementsAre(std::pair<int64_t, int64_t>{2, retry_at},
                                           std::pair<int64_t, int64_t>{3, retry_at}));
  EXPECT_THAT(plan.extensions, IsEmpty()) << "the head waits: it is not taken early";
}

TEST(ClaimPlanTest, RowsDueBeforeTheirDueHeadSortBehindIt) {
  // The head (due at kNow - 500) is beyond the window; rows 2 and 3 came due earlier. They take
  // its time, so the next window, ordered by (time, id), reaches the head first.
  auto input = Input({Row(2, "a", kNow - 900), Row(3, "a", kNow - 800)},
                     {Row(1, "a", kNow - 500), Row(2, "a", kNow - 900), Row(3, "a", kNow - 800)});
  relay::ClaimPlan plan = relay::PlanClaim(Options(2), input);
  EXPECT_THAT(plan.lease, IsEmpty());
  EXPECT_THAT(Scheduled(plan), ElementsAre(std::pair<int64_t, int64_t>{2, kNow - 500},
                                           std::pair<int64_t, int64_t>{3, kNow - 500}));
  EXPECT_TRUE(plan.more_due);
  // And the claim reads the room from its head, to take the run in this claim.
  ASSERT_EQ(plan.extensions.size(), 1u);
  EXPECT_EQ(plan.extensions[0].after_id, 0);
  EXPECT_EQ(plan.extensions[0].rows, 2u)
      << "the head and the window's rows of the room, within the batch";

  // The extension locked the head: the run is 1, 2 (the batch of 2 is full).
  input.locked.push_back(Row(1, "a", kNow - 500));
  relay::ClaimPlan second = relay::PlanClaim(Options(2), input);
  EXPECT_THAT(second.lease, ElementsAre(1, 2));
  EXPECT_THAT(second.schedule, IsEmpty()) << "row 3 is due already";
}

TEST(ClaimPlanTest, RowsBehindARowThatOnlyLooksLaterAreNotParked) {
  // Row 1 was given back by another relay a moment after this claim read the server's now.
  auto input = Input({Row(2, "a"), Row(3, "a")}, {Row(1, "a", kNow + 3), Row(2, "a"), Row(3, "a")});
  relay::ClaimPlan plan = relay::PlanClaim(Options(), input);
  EXPECT_THAT(Scheduled(plan), ElementsAre(std::pair<int64_t, int64_t>{2, kNow + 3},
                                           std::pair<int64_t, int64_t>{3, kNow + 3}));
  EXPECT_THAT(plan.extensions, IsEmpty()) << "not due yet, and not this claim's";
}

TEST(ClaimPlanTest, AFailedRowWaitingForItsRetryIsNeverTakenEarly) {
  auto input = Input({Row(1, "a")}, {Row(1, "a"), Row(2, "a", kNow + 5'000)});
  relay::ClaimPlan plan = relay::PlanClaim(Options(), input);
  EXPECT_THAT(plan.lease, ElementsAre(1));
  EXPECT_THAT(plan.extensions, IsEmpty());
}

TEST(ClaimPlanTest, CutRoomsGetIntervalSlotsAndSkippedTypesShareThePreviousSlot) {
  relay::PlanOptions options = Options();
  options.rooms.run_cut_rows = 2;
  options.rooms.room_min_interval_ms = 50;
  options.rooms.skip_event_types = {"RoomHeatChanged"};
  std::vector<relay::PlanRow> rows = {Row(1, "a"),
                                      Row(2, "a"),
                                      Row(3, "a", kNow - 1, "RoomHeatChanged"),
                                      Row(4, "a"),
                                      Row(5, "a", kNow - 1, "RoomHeatChanged"),
                                      Row(6, "a"),
                                      Row(7, "b")};
  relay::ClaimPlan plan = relay::PlanClaim(options, Input(rows, rows));
  // Row 3 is not sent, so it does not count toward the cut of 2.
  EXPECT_THAT(plan.lease, ElementsAre(1, 2, 3, 7));
  // The run's last send is at now + 50; then one slot per sent row.
  EXPECT_THAT(Scheduled(plan), ElementsAre(std::pair<int64_t, int64_t>{4, kNow + 100},
                                           std::pair<int64_t, int64_t>{5, kNow + 100},
                                           std::pair<int64_t, int64_t>{6, kNow + 150}));
  ASSERT_EQ(plan.paced_rooms.size(), 1u);
  EXPECT_EQ(plan.paced_rooms[0].room_id, "a");
  EXPECT_EQ(plan.paced_rooms[0].rows_scheduled, 3u);
  EXPECT_EQ(plan.paced_rooms[0].last_slot_ms, kNow + 150);
  EXPECT_TRUE(plan.more_due);
}

TEST(ClaimPlanTest, WithoutRoomMinIntervalNothingIsCut) {
  relay::PlanOptions options = Options();
  options.rooms.run_cut_rows = 2;  // ignored: room_min_interval_ms is 0
  std::vector<relay::PlanRow> rows = {Row(1, "a"), Row(2, "a"), Row(3, "a")};
  relay::ClaimPlan plan = relay::PlanClaim(options, Input(rows, rows));
  EXPECT_THAT(plan.lease, ElementsAre(1, 2, 3));
  EXPECT_THAT(plan.paced_rooms, IsEmpty());
}

TEST(ClaimPlanTest, RowsOfARoomBeyondTheBatchAreNotTouched) {
  // The window reached its limit (2) inside room a: row 3 is pending and due but not held.
  auto input = Input({Row(1, "a"), Row(2, "a")}, {Row(1, "a"), Row(2, "a"), Row(3, "a")});
  relay::ClaimPlan plan = relay::PlanClaim(Options(2), input);
  EXPECT_THAT(plan.lease, ElementsAre(1, 2));
  EXPECT_THAT(plan.schedule, IsEmpty());
  EXPECT_THAT(plan.extensions, IsEmpty());
  EXPECT_TRUE(plan.more_due);
}

TEST(ClaimPlanTest, WithoutPerRoomOrderEveryLockedRowIsLeased) {
  relay::PlanOptions options = Options();
  options.rooms.per_room_order = false;
  auto input = Input({Row(5, "a"), Row(2, "a")}, {});
  relay::ClaimPlan plan = relay::PlanClaim(options, input);
  EXPECT_THAT(plan.lease, ElementsAre(2, 5));
}

TEST(ClaimPlanTest, ADueRowIsNeverMovedEarlierAndAPushedRowOnlyLater) {
  // Row 3 already waits past the head's retry: it keeps its time.
  const int64_t retry_at = kNow + 5'000;
  const int64_t far = retry_at + 700'000;
  auto input = Input({Row(2, "a"), Row(3, "a", far)},
                     {Row(1, "a", retry_at), Row(2, "a"), Row(3, "a", far)});
  relay::ClaimPlan plan = relay::PlanClaim(Options(), input);
  EXPECT_THAT(Scheduled(plan), ElementsAre(std::pair<int64_t, int64_t>{2, retry_at}));
}

TEST(ClaimPlanTest, TheBatchTakesEveryRoomsFirstRowBeforeAnyonesSecond) {
  // Room a comes first and has 4 rows; a batch of 5 goes a1, b1, c1, then a2, b2.
  std::vector<relay::PlanRow> rows = {Row(1, "a"), Row(2, "a"), Row(3, "a"), Row(4, "a"),
                                      Row(5, "b"), Row(6, "b"), Row(7, "c")};
  relay::ClaimPlan plan = relay::PlanClaim(Options(5), Input(rows, rows));
  EXPECT_THAT(plan.lease, ElementsAre(1, 2, 5, 6, 7));
  EXPECT_TRUE(plan.more_due);
  EXPECT_THAT(plan.schedule, IsEmpty())
      << "without room_min_interval the rows beyond the batch stay due";
}

TEST(ClaimPlanTest, TheSpreadKeepsEachRoomsPrefixInIdOrder) {
  // Ids interleave the rooms; each room leases a prefix of its own run, never a later row alone.
  std::vector<relay::PlanRow> rows = {Row(1, "a"), Row(2, "b"), Row(3, "a"),
                                      Row(4, "b"), Row(5, "a"), Row(6, "b")};
  relay::ClaimPlan plan = relay::PlanClaim(Options(3), Input(rows, rows));
  EXPECT_THAT(plan.lease, ElementsAre(1, 2, 3));
}

TEST(ClaimPlanTest, WithRoomMinIntervalTheRowsBeyondARoomsShareTakeSlotsAfterIt) {
  relay::PlanOptions options = Options(3);
  options.rooms.run_cut_rows = 20;
  options.rooms.room_min_interval_ms = 50;
  std::vector<relay::PlanRow> rows = {Row(1, "a"), Row(2, "a"), Row(3, "a"), Row(4, "b"),
                                      Row(5, "c")};
  relay::ClaimPlan plan = relay::PlanClaim(options, Input(rows, rows));
  // One row per room: the batch of 3 holds no second row of any room.
  EXPECT_THAT(plan.lease, ElementsAre(1, 4, 5));
  EXPECT_THAT(Scheduled(plan), ElementsAre(std::pair<int64_t, int64_t>{2, kNow + 50},
                                           std::pair<int64_t, int64_t>{3, kNow + 100}));
  ASSERT_EQ(plan.paced_rooms.size(), 1u) << "cut by the batch, its rows take pace slots";
  EXPECT_EQ(plan.paced_rooms[0].room_id, "a");
  EXPECT_EQ(plan.paced_rooms[0].last_slot_ms, kNow + 100);
  EXPECT_TRUE(plan.more_due);
}

TEST(ClaimPlanTest, ExtensionsGetOnlyWhatTheRoomsInTheWindowLeave) {
  // Room a's head (1) is beyond the window; rooms b and c fill it. The batch of 3 goes to b and
  // c first; the extension of a gets the one row left.
  auto input = Input({Row(2, "a"), Row(3, "b"), Row(4, "c")},
                     {Row(1, "a", kNow - 500), Row(2, "a"), Row(3, "b"), Row(4, "c")});
  relay::ClaimPlan plan = relay::PlanClaim(Options(3), input);
  EXPECT_THAT(plan.lease, ElementsAre(3, 4));
  ASSERT_EQ(plan.extensions.size(), 1u);
  EXPECT_EQ(plan.extensions[0].room_id, "a");
  EXPECT_EQ(plan.extensions[0].rows, 1u);

  // Two blocked rooms and one row left: the first room in order gets it.
  auto two = Input(
      {Row(2, "a"), Row(6, "b"), Row(9, "c")},
      {Row(1, "a", kNow - 500), Row(2, "a"), Row(5, "b", kNow - 500), Row(6, "b"), Row(9, "c")});
  relay::ClaimPlan shared = relay::PlanClaim(Options(2), two);
  EXPECT_THAT(shared.lease, ElementsAre(9));
  ASSERT_EQ(shared.extensions.size(), 1u);
  EXPECT_EQ(shared.extensions[0].room_id, "a");
  EXPECT_EQ(shared.extensions[0].rows, 1u);
}

// A room whose part of the batch was read and locked whole, with a due row after it: the batch
// the other rooms leave goes to it (the claim reads only each room's part, so more of it may be
// due), and a due row the batch has no room for says more are due.
TEST(ClaimPlanTest, TheBatchLeftGoesToARoomWhosePartEndedAtADueRow) {
  auto input = Input({Row(1, "a"), Row(2, "a"), Row(9, "b")},
                     {Row(1, "a"), Row(2, "a"), Row(3, "a"), Row(9, "b")});
  relay::ClaimPlan plan = relay::PlanClaim(Options(10), input);
  EXPECT_THAT(plan.lease, ElementsAre(1, 2, 9));
  ASSERT_EQ(plan.extensions.size(), 1u);
  EXPECT_EQ(plan.extensions[0].room_id, "a");
  EXPECT_EQ(plan.extensions[0].after_id, 2);
  EXPECT_EQ(plan.extensions[0].rows, 7u) << "what the batch of 10 has left";
  EXPECT_TRUE(plan.more_due);

  relay::ClaimPlan full = relay::PlanClaim(Options(3), input);
  EXPECT_THAT(full.lease, ElementsAre(1, 2, 9));
  EXPECT_THAT(full.extensions, IsEmpty());
  EXPECT_TRUE(full.more_due) << "row 3 is due and the batch had no room for it";
}

TEST(ClaimPlanTest, ManyRoomsOfOneRowEachAreAllLeased) {
  std::vector<relay::PlanRow> rows;
  for (int64_t id = 1; id <= 100; ++id) rows.push_back(Row(id, "room-" + std::to_string(id)));
  relay::PlanOptions options = Options(100);
  options.rooms.run_cut_rows = 20;
  options.rooms.room_min_interval_ms = 50;
  relay::ClaimPlan plan = relay::PlanClaim(options, Input(rows, rows));
  EXPECT_EQ(plan.lease.size(), 100u);
  EXPECT_THAT(plan.schedule, IsEmpty());
}

TEST(ClaimPlanTest, WithRoomMinIntervalAndManyRoomsDueTheBatchHoldsOneRowPerRoom) {
  // Three rooms fill at least half a batch of 4 with their first rows: the second rows get the
  // next interval slot instead of waiting out room_min_interval inside the relay's round.
  relay::PlanOptions options = Options(4);
  options.rooms.run_cut_rows = 20;
  options.rooms.room_min_interval_ms = 50;
  std::vector<relay::PlanRow> rows = {Row(1, "a"), Row(2, "a"), Row(3, "b"), Row(4, "b"),
                                      Row(5, "c")};
  relay::ClaimPlan plan = relay::PlanClaim(options, Input(rows, rows));
  EXPECT_THAT(plan.lease, ElementsAre(1, 3, 5));
  EXPECT_THAT(Scheduled(plan), ElementsAre(std::pair<int64_t, int64_t>{2, kNow + 50},
                                           std::pair<int64_t, int64_t>{4, kNow + 50}));
  EXPECT_TRUE(plan.more_due);

  // One room alone (a busy room) still gets its run, up to the cut.
  std::vector<relay::PlanRow> busy = {Row(1, "a"), Row(2, "a"), Row(3, "a")};
  EXPECT_THAT(relay::PlanClaim(options, Input(busy, busy)).lease, ElementsAre(1, 2, 3));
}

TEST(ClaimPlanTest, WithPacksTheCutAndTheSlotsCountMessagesOfPackEventsRows) {
  relay::PlanOptions options = Options();
  options.rooms.run_cut_rows = 1;  // one message per round
  options.rooms.room_min_interval_ms = 50;
  options.rooms.pack_events = 3;
  std::vector<relay::PlanRow> rows;
  for (int64_t id = 1; id <= 8; ++id) rows.push_back(Row(id, "a"));
  relay::ClaimPlan plan = relay::PlanClaim(options, Input(rows, rows));
  // The run is one message of 3 rows; the next 3 share the next slot, the last 2 the one after.
  EXPECT_THAT(plan.lease, ElementsAre(1, 2, 3));
  EXPECT_THAT(Scheduled(plan), ElementsAre(std::pair<int64_t, int64_t>{4, kNow + 50},
                                           std::pair<int64_t, int64_t>{5, kNow + 50},
                                           std::pair<int64_t, int64_t>{6, kNow + 50},
                                           std::pair<int64_t, int64_t>{7, kNow + 100},
                                           std::pair<int64_t, int64_t>{8, kNow + 100}));
}

TEST(ClaimPlanTest, WithPacksAndManyRoomsDueEachRoomsFirstShareIsOneMessage) {
  relay::PlanOptions options = Options(6);
  options.rooms.run_cut_rows = 20;
  options.rooms.room_min_interval_ms = 50;
  options.rooms.pack_events = 2;
  std::vector<relay::PlanRow> rows = {Row(1, "a"), Row(2, "a"), Row(3, "a"),
                                      Row(4, "b"), Row(5, "b"), Row(6, "c")};
  relay::ClaimPlan plan = relay::PlanClaim(options, Input(rows, rows));
  EXPECT_THAT(plan.lease, ElementsAre(1, 2, 4, 5, 6));
  EXPECT_THAT(Scheduled(plan), ElementsAre(std::pair<int64_t, int64_t>{3, kNow + 50}));
}

TEST(ClaimPlanTest, WithPacksTheBatchCountsMessagesAndEachRoomsFirstMessageIsWhole) {
  relay::PlanOptions options = Options(2);
  options.rooms.pack_events = 2;
  std::vector<relay::PlanRow> rows = {Row(1, "a"), Row(2, "a"), Row(3, "a"),
                                      Row(4, "b"), Row(5, "b"), Row(6, "c")};
  relay::ClaimPlan plan = relay::PlanClaim(options, Input(rows, rows));
  // Two messages: a's first (2 rows) and b's (2 rows); c waits for the next claim.
  EXPECT_THAT(plan.lease, ElementsAre(1, 2, 4, 5));
  EXPECT_TRUE(plan.more_due);

  // Four messages hold every room's rows: a's two, b's and c's.
  options.limit = 4;
  EXPECT_THAT(relay::PlanClaim(options, Input(rows, rows)).lease, ElementsAre(1, 2, 3, 4, 5, 6));
}

TEST(ClaimPlanTest, ABacklogOfManyRoomsGetsEachRoomsDueEventsInOneMessage) {
  // 50 rooms of 3 due events each and a batch of 20 messages with packs of 20: the 20 oldest
  // rooms get all their 3 events, in one message each, whatever the number of rooms due.
  relay::PlanOptions options = Options(20);
  options.rooms.pack_events = 20;
  options.rooms.run_cut_rows = 40;
  options.rooms.room_min_interval_ms = 25;
  std::vector<relay::PlanRow> rows;
  for (int64_t k = 0; k < 3; ++k) {
    for (int64_t room = 0; room < 50; ++room) {
      rows.push_back(Row(1 + k * 50 + room, "room-" + std::to_string(100 + room)));
    }
  }
  relay::ClaimPlan plan = relay::PlanClaim(options, Input(rows, rows));
  ASSERT_EQ(plan.lease.size(), 60u);
  std::map<std::string, int> leased;
  for (const relay::PlanRow& row : rows) {
    if (std::binary_search(plan.lease.begin(), plan.lease.end(), row.id)) ++leased[row.room_id];
  }
  EXPECT_EQ(leased.size(), 20u);
  for (const auto& [room, events] : leased) EXPECT_EQ(events, 3) << room;
  EXPECT_TRUE(plan.more_due);
}

// A locked head that recorded a pack of `pack_size` events (a send that failed without a definite
// drop).
relay::PlanRow Head(int64_t id, const std::string& room, uint32_t pack_size) {
  relay::PlanRow row = Row(id, room);
  row.pack_size = pack_size;
  return row;
}

TEST(ClaimPlanTest, ARecordedPackIsItsRoomsFirstMessageWhateverPackEvents) {
  relay::PlanOptions options = Options(3);
  options.rooms.pack_events = 2;
  std::vector<relay::PlanRow> pending = {Row(1, "a"), Row(2, "a"),  Row(3, "a"), Row(4, "a"),
                                         Row(5, "a"), Row(6, "a"),  Row(7, "b"), Row(8, "b"),
                                         Row(9, "b"), Row(10, "c"), Row(11, "c")};
  std::vector<relay::PlanRow> locked = pending;
  locked[0] = Head(1, "a", 5);
  relay::ClaimPlan plan = relay::PlanClaim(options, Input(locked, pending));
  // Room a's first message is its recorded pack of 5, then b and c a message (2 rows) each, as
  // far as the batch of 3 messages goes.
  EXPECT_THAT(plan.lease, ElementsAre(1, 2, 3, 4, 5, 7, 8, 10, 11));
  EXPECT_TRUE(plan.more_due);

  // With pack_events 1 too, and a recorded pack smaller than pack_events is that pack.
  options.rooms.pack_events = 1;
  options.limit = 4;
  EXPECT_THAT(relay::PlanClaim(options, Input(locked, pending)).lease,
              ElementsAre(1, 2, 3, 4, 5, 6, 7, 10));
  options.rooms.pack_events = 20;
  options.limit = 100;
  locked[0] = Head(1, "a", 2);
  relay::ClaimPlan small = relay::PlanClaim(options, Input(locked, pending));
  EXPECT_THAT(small.lease, ElementsAre(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11))
      << "the rows after the pack follow in later messages of the same claim";
}

TEST(ClaimPlanTest, ARecordedPackIsOneMessageOfTheBatch) {
  relay::PlanOptions options = Options(1);
  options.rooms.pack_events = 2;
  std::vector<relay::PlanRow> pending = {Row(1, "a"), Row(2, "a"), Row(3, "a"), Row(4, "b"),
                                         Row(5, "b"), Row(6, "b"), Row(7, "b")};
  std::vector<relay::PlanRow> locked = pending;
  locked[3] = Head(4, "b", 3);
  relay::ClaimPlan plan = relay::PlanClaim(options, Input(locked, pending));
  // Room a comes first (its head is older): the one message is its first; b's pack waits whole.
  EXPECT_THAT(plan.lease, ElementsAre(1, 2));
  EXPECT_TRUE(plan.more_due);

  // Room b first: the one message is its pack, whole.
  std::vector<relay::PlanRow> b_first = {Head(1, "b", 3), Row(2, "b"), Row(3, "b"), Row(4, "a"),
                                         Row(5, "a")};
  std::vector<relay::PlanRow> b_pending = b_first;
  b_pending[0].pack_size = 0;
  EXPECT_THAT(relay::PlanClaim(options, Input(b_first, b_pending)).lease, ElementsAre(1, 2, 3));
  // Two messages: b's pack, then a's first message.
  options.limit = 2;
  EXPECT_THAT(relay::PlanClaim(options, Input(b_first, b_pending)).lease,
              ElementsAre(1, 2, 3, 4, 5));
}

TEST(ClaimPlanTest, AClaimHoldingFewerOfARecordedPacksRowsGivesWhatItHolds) {
  relay::PlanOptions options = Options(1);
  options.rooms.pack_events = 2;
  std::vector<relay::PlanRow> pending = {Row(1, "a"), Row(2, "a"), Row(3, "a"), Row(4, "a"),
                                         Row(5, "a"), Row(6, "a"), Row(7, "b")};
  std::vector<relay::PlanRow> locked = pending;
  locked[0] = Head(1, "a", 5);
  // A batch of one message: the whole recorded pack.
  EXPECT_THAT(relay::PlanClaim(options, Input(locked, pending)).lease, ElementsAre(1, 2, 3, 4, 5));

  // Row 4 is locked by another transaction: the run ends there, and the 3 rows held are given
  // as one message now, not held back waiting for it.
  options.limit = 4;
  options.rooms.pack_events = 1;
  std::vector<relay::PlanRow> held = {Head(1, "a", 5), Row(2, "a"), Row(3, "a"),
                                      Row(5, "a"),     Row(6, "a"), Row(7, "b")};
  EXPECT_THAT(relay::PlanClaim(options, Input(held, pending)).lease, ElementsAre(1, 2, 3, 7));
}

TEST(ClaimPlanTest, WithPacingARecordedPackCountsAsOneMessageOfTheCutAndOneSlot) {
  relay::PlanOptions options = Options();
  options.rooms.run_cut_rows = 2;
  options.rooms.room_min_interval_ms = 50;
  options.rooms.pack_events = 2;
  std::vector<relay::PlanRow> pending;
  for (int64_t id = 1; id <= 12; ++id) pending.push_back(Row(id, "a"));
  std::vector<relay::PlanRow> locked = pending;
  locked[0] = Head(1, "a", 5);
  relay::ClaimPlan plan = relay::PlanClaim(options, Input(locked, pending));
  // Two messages: the pack of 5, then 2 rows (the next slot); the rest a slot per 2 rows.
  EXPECT_THAT(plan.lease, ElementsAre(1, 2, 3, 4, 5, 6, 7));
  EXPECT_THAT(Scheduled(plan), ElementsAre(std::pair<int64_t, int64_t>{8, kNow + 100},
                                           std::pair<int64_t, int64_t>{9, kNow + 100},
                                           std::pair<int64_t, int64_t>{10, kNow + 150},
                                           std::pair<int64_t, int64_t>{11, kNow + 150},
                                           std::pair<int64_t, int64_t>{12, kNow + 200}));
}

TEST(ClaimPlanTest, WithPacingARecordedPackLeftForALaterClaimKeepsItsRowsInOneSlot) {
  relay::PlanOptions options = Options(2);
  options.rooms.run_cut_rows = 20;
  options.rooms.room_min_interval_ms = 50;
  options.rooms.pack_events = 2;
  std::vector<relay::PlanRow> pending = {Row(1, "a"), Row(2, "a"), Row(3, "a"),
                                         Row(4, "c"), Row(5, "b"), Row(6, "b"),
                                         Row(7, "b"), Row(8, "b"), Row(9, "b")};
  std::vector<relay::PlanRow> locked = pending;
  locked[4] = Head(5, "b", 3);
  relay::ClaimPlan plan = relay::PlanClaim(options, Input(locked, pending));
  // Two messages: a's first and c's; b (its head the youngest) gets none.
  EXPECT_THAT(plan.lease, ElementsAre(1, 2, 4));
  // b's pack (5, 6, 7) comes due at once in one slot, so a later claim holds it whole.
  EXPECT_THAT(Scheduled(plan), ElementsAre(std::pair<int64_t, int64_t>{3, kNow + 50},
                                           std::pair<int64_t, int64_t>{5, kNow + 50},
                                           std::pair<int64_t, int64_t>{6, kNow + 50},
                                           std::pair<int64_t, int64_t>{7, kNow + 50},
                                           std::pair<int64_t, int64_t>{8, kNow + 100},
                                           std::pair<int64_t, int64_t>{9, kNow + 100}));
}

TEST(ClaimPlanTest, APacedRoomLeasesNothingAndItsRowsComeDueAfterItsPacedForMs) {
  relay::PlanOptions options = Options(2);  // room b alone fills half the batch
  options.rooms.run_cut_rows = 20;
  options.rooms.room_min_interval_ms = 50;
  options.paced_rooms = {{"a", 30}};
  std::vector<relay::PlanRow> rows = {Row(1, "a"), Row(2, "a"), Row(3, "b")};
  relay::ClaimPlan plan = relay::PlanClaim(options, Input(rows, rows));
  EXPECT_THAT(plan.lease, ElementsAre(3));
  EXPECT_THAT(Scheduled(plan), ElementsAre(std::pair<int64_t, int64_t>{1, kNow + 30},
                                           std::pair<int64_t, int64_t>{2, kNow + 80}));
  ASSERT_EQ(plan.paced_rooms.size(), 1u)
      << "the relay polls every room_min_interval while they come due";
  EXPECT_EQ(plan.paced_rooms[0].last_slot_ms, kNow + 80);

  // A paced room whose head is in flight elsewhere is left as it is (nothing moves).
  auto behind =
      Input({Row(2, "a")}, {Row(1, "a", kNow + 30'000, "RoomGiftSent", true), Row(2, "a")});
  relay::ClaimPlan left = relay::PlanClaim(options, behind);
  EXPECT_THAT(left.lease, IsEmpty());
  EXPECT_THAT(left.schedule, IsEmpty());

  // Too few other rooms to fill half the batch: the round would have nothing else to send, so
  // the paced room's run is leased (the round waits out room_min_interval itself).
  relay::PlanOptions few = options;
  few.limit = 100;
  EXPECT_THAT(relay::PlanClaim(few, Input(rows, rows)).lease, ElementsAre(1, 2, 3));

  // Without room_min_interval no room is paced.
  relay::PlanOptions no_interval = Options();
  no_interval.paced_rooms = {{"a", 30}};
  EXPECT_THAT(relay::PlanClaim(no_interval, Input(rows, rows)).lease, ElementsAre(1, 2, 3));
}

// The rooms a claim took from the room schedule, each with its next due time, or dropped.
std::map<std::string, int64_t> RoomsDue(const relay::ClaimPlan& plan) {
  std::map<std::string, int64_t> out;
  for (const relay::PlannedRoomDue& room : plan.rooms_due) out[room.room_id] = room.due_at_ms;
  return out;
}

relay::PlanRow HeldBy(int64_t id, const std::string& room, const std::string& token,
                      int64_t lease_end) {
  relay::PlanRow row = Row(id, room, lease_end, "RoomGiftSent", true);
  row.claim_token = token;
  return row;
}

TEST(ClaimPlanTest, EveryRoomTakenFromTheScheduleGetsItsNextDueTimeOrGoesIdle) {
  relay::PlanOptions options = Options(1);
  options.lease_ms = 30'000;
  options.own_token_prefix = "relay-aaaaaaaaaaaaaaaa-bbbbbbbb-";
  const std::string own = options.own_token_prefix + "000000000000000000000000";
  const std::string other_relay = "relay-cccccccccccccccc-dddddddd-000000000000000000000000";
  const std::string hook = "0123456789abcdef0123456789abcdef";
  auto input =
      Input({Row(1, "leased"), Row(2, "full")},
            {Row(1, "leased"), Row(2, "full"), Row(3, "retry", kNow + 700),
             HeldBy(4, "own", own, kNow + 20'000), HeldBy(5, "other", other_relay, kNow + 20'000),
             HeldBy(6, "hook", hook, kNow + 2'000)});
  input.rooms = {"leased", "full", "retry", "own", "other", "hook", "empty"};
  relay::ClaimPlan plan = relay::PlanClaim(options, input);
  EXPECT_THAT(plan.lease, ElementsAre(1));
  const std::map<std::string, int64_t> due = RoomsDue(plan);
  EXPECT_EQ(due.at("leased"), kNow + 30'000) << "its marks bring it back";
  EXPECT_EQ(due.at("full"), kNow) << "due, and the batch had no room for it";
  EXPECT_EQ(due.at("retry"), kNow + 700) << "its head's retry";
  EXPECT_EQ(due.at("own"), kNow + 20'000) << "this relay's own lease: its marks bring it back";
  EXPECT_EQ(due.at("other"), kNow + relay::kRelayHeadRecheckMs);
  EXPECT_EQ(due.at("hook"), kNow + relay::kHookHeadRecheckMs);
  EXPECT_EQ(due.count("empty"), 0u);
  EXPECT_THAT(plan.rooms_idle, ElementsAre("empty"));
}

TEST(ClaimPlanTest, APacedRoomsNextDueTimeIsItsHeadsSlot) {
  relay::PlanOptions options = Options(2);
  options.rooms.run_cut_rows = 20;
  options.rooms.room_min_interval_ms = 50;
  options.paced_rooms = {{"a", 30}};
  std::vector<relay::PlanRow> rows = {Row(1, "a"), Row(2, "a"), Row(3, "b")};
  auto input = Input(rows, rows);
  input.rooms = {"a", "b"};
  const std::map<std::string, int64_t> due = RoomsDue(relay::PlanClaim(options, input));
  EXPECT_EQ(due.at("a"), kNow + 30);
  EXPECT_EQ(due.at("b"), kNow + options.lease_ms);
}

}  // namespace
}  // namespace room_outbox
