#include "core/app_budget/share_split.h"

#include <gtest/gtest.h>

#include "core/app_budget/app_budget_member.h"

#include <string>
#include <vector>

namespace room_outbox {
namespace {

constexpr int64_t kNow = 1'000'000;
constexpr int64_t kBeat = 1000;

core::MemberBeat Member(std::string id, int64_t demand, int64_t share = 0, int64_t age_ms = 0) {
  return core::MemberBeat{std::move(id), kNow - age_ms, demand, share};
}

double ShareOf(const std::vector<core::MemberBeat>& members, const std::string& self,
               double limit = 200) {
  return core::SplitAppBudget(members, self, limit, kNow, kBeat).requests_per_second;
}

TEST(ShareSplitTest, AloneTakesTheWholeLimit) {
  const core::AppShare share = core::SplitAppBudget({Member("a", 0)}, "a", 200, kNow, kBeat);
  EXPECT_DOUBLE_EQ(share.requests_per_second, 200);
  EXPECT_EQ(share.live_members, 1);
}

TEST(ShareSplitTest, BusyMembersSplitEqually) {
  const std::vector<core::MemberBeat> m = {Member("a", 200), Member("b", 200), Member("c", 200)};
  for (const char* id : {"a", "b", "c"}) {
    EXPECT_NEAR(ShareOf(m, id), 200.0 / 3, 1e-9) << id;
  }
}

TEST(ShareSplitTest, DividedByDemandWithTheFloorForIdleMembers) {
  // b wants 30/s, a and c all they can get; 10% of the limit is split equally first.
  const std::vector<core::MemberBeat> m = {Member("a", 200), Member("b", 30), Member("c", 200)};
  EXPECT_NEAR(ShareOf(m, "b"), 30, 1e-9) << "b gets its demand (floor included)";
  EXPECT_NEAR(ShareOf(m, "a"), (200 - 30) / 2.0, 1e-9);
  EXPECT_NEAR(ShareOf(m, "c"), (200 - 30) / 2.0, 1e-9);
  // An idle member keeps the floor, so it has tokens the moment it becomes busy.
  const std::vector<core::MemberBeat> idle = {Member("a", 200), Member("b", 0)};
  EXPECT_NEAR(ShareOf(idle, "b"), 200 * core::kFloorFraction / 2, 1e-9);
  EXPECT_NEAR(ShareOf(idle, "a"), 200 - 200 * core::kFloorFraction / 2, 1e-9);
}

TEST(ShareSplitTest, WhatNoDemandTakesIsSplitEqually) {
  const std::vector<core::MemberBeat> m = {Member("a", 20), Member("b", 40)};
  EXPECT_NEAR(ShareOf(m, "a"), 20 + (200 - 60) / 2.0, 1e-9);
  EXPECT_NEAR(ShareOf(m, "b"), 40 + (200 - 60) / 2.0, 1e-9);
}

TEST(ShareSplitTest, SharesOfOneReadingAddUpToTheLimit) {
  const std::vector<core::MemberBeat> m = {Member("a", 5), Member("b", 90), Member("c", 200),
                                           Member("d", 0), Member("e", 37)};
  double sum = 0;
  for (const char* id : {"a", "b", "c", "d", "e"}) sum += ShareOf(m, id);
  EXPECT_NEAR(sum, 200, 1e-9);
}

TEST(ShareSplitTest, AMemberThatStoppedBeatingDropsOutAfterTwoBeats) {
  const std::vector<core::MemberBeat> fresh = {Member("a", 200), Member("b", 200, 0, 2 * kBeat)};
  EXPECT_EQ(core::SplitAppBudget(fresh, "a", 200, kNow, kBeat).live_members, 2);
  EXPECT_NEAR(ShareOf(fresh, "a"), 100, 1e-9);
  const std::vector<core::MemberBeat> stale = {Member("a", 200),
                                               Member("b", 200, 100, 2 * kBeat + 1)};
  EXPECT_EQ(core::SplitAppBudget(stale, "a", 200, kNow, kBeat).live_members, 1);
  EXPECT_NEAR(ShareOf(stale, "a"), 200, 1e-9) << "its share is not held back for it";
}

TEST(ShareSplitTest, ANewcomerWaitsForTheOthersToGiveWay) {
  // a took the whole limit alone; b joins: b gets only what a leaves until a's next beat.
  const std::vector<core::MemberBeat> joined = {Member("a", 200, 200)};
  EXPECT_DOUBLE_EQ(ShareOf(joined, "b"), core::kMinShare);
  EXPECT_TRUE(core::SplitAppBudget(joined, "b", 200, kNow, kBeat).waiting_for_others);
  EXPECT_EQ(core::SplitAppBudget(joined, "b", 200, kNow, kBeat).live_members, 2);
  // a's next beat sees b (no demand yet): a gives way down to b's floor.
  const std::vector<core::MemberBeat> seen = {Member("a", 200, 200), Member("b", 0, 1)};
  const double a_next = ShareOf(seen, "a");
  EXPECT_NEAR(a_next, 200 - 200 * core::kFloorFraction / 2, 1e-9);
  // b busy now: half once a has given way, never more than a leaves.
  const std::vector<core::MemberBeat> busy = {Member("a", 200, 190), Member("b", 200, 1)};
  EXPECT_NEAR(ShareOf(busy, "b"), 10, 1e-9);
  const std::vector<core::MemberBeat> settled = {Member("a", 200, 100), Member("b", 200, 10)};
  EXPECT_NEAR(ShareOf(settled, "b"), 100, 1e-9);
  EXPECT_FALSE(core::SplitAppBudget(settled, "b", 200, kNow, kBeat).waiting_for_others);
}

TEST(ShareSplitTest, SelfMissingFromTheReadingCountsWithNoDemand) {
  const core::AppShare share = core::SplitAppBudget({Member("a", 0)}, "b", 200, kNow, kBeat);
  EXPECT_EQ(share.live_members, 2);
  EXPECT_DOUBLE_EQ(share.requests_per_second, 100);
}

TEST(ShareSplitTest, ReportedDemand) {
  EXPECT_EQ(core::ReportedDemand(50, 0, 1000, 200), 50);
  EXPECT_EQ(core::ReportedDemand(50, 0, 500, 200), 100);
  EXPECT_EQ(core::ReportedDemand(50, 3, 1000, 200), 200) << "waited: wants all it may take";
  EXPECT_EQ(core::ReportedDemand(50, 3, 1000, 80), 80);
  EXPECT_EQ(core::ReportedDemand(900, 0, 1000, 200), 200) << "never more than the most";
  EXPECT_EQ(core::ReportedDemand(0, 0, 0, 200), 0);
}

TEST(ShareSplitTest, FallbackIsTheLastShareNeverMore) {
  EXPECT_DOUBLE_EQ(core::FallbackShare(70.0, 200, 4), 70);
  EXPECT_DOUBLE_EQ(core::FallbackShare(500.0, 200, 4), 200);
  EXPECT_DOUBLE_EQ(core::FallbackShare(std::nullopt, 200, 4), 50);
}

// A share holds 1.5 beat intervals from the start of its beat, so it runs out before the others
// count the member as gone (2 intervals after its beat was written); a beat that took longer
// than that leaves the least validity, never "no end".
TEST(ShareValidityTest, OneAndAHalfBeatsFromTheBeatsStart) {
  using std::chrono::milliseconds;
  const auto now = std::chrono::steady_clock::now();
  const milliseconds fresh = core::ShareValidity(milliseconds(1000), now);
  EXPECT_LE(fresh, milliseconds(1500));
  EXPECT_GT(fresh, milliseconds(1400));
  const milliseconds late = core::ShareValidity(milliseconds(1000), now - milliseconds(400));
  EXPECT_LE(late, milliseconds(1100));
  EXPECT_EQ(core::ShareValidity(milliseconds(1000), now - milliseconds(5000)), milliseconds(1));
}

}  // namespace
}  // namespace room_outbox
