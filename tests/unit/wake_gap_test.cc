// WakeGap: the least gap between the start of a round and a round a wake-up starts; it doubles
// while woken rounds claim nothing, up to kMaxWakeGap, and a claim sets it back.
#include "worker/wake_gap.h"

#include <gtest/gtest.h>

namespace room_outbox::relay {
namespace {

using std::chrono::milliseconds;

TEST(WakeGapTest, AWakeUpWaitsMinIntervalAfterTheStartOfTheRoundBefore) {
  WakeGap gap(milliseconds(10));
  EXPECT_EQ(gap.WakeAt(), 0);  // before any round a wake-up is taken at once
  gap.RoundStarted(1000);
  EXPECT_EQ(gap.WakeAt(), 1010);
  gap.RoundEnded(/*woken=*/true, /*claimed=*/true);
  EXPECT_EQ(gap.WakeAt(), 1010);
}

TEST(WakeGapTest, WokenRoundsThatFindNothingWidenTheGapUpToItsBound) {
  WakeGap gap(milliseconds(10));
  int64_t now = 0;
  for (int i = 0; i < 20; ++i) {
    gap.RoundStarted(now);
    gap.RoundEnded(/*woken=*/true, /*claimed=*/false);
    now = gap.WakeAt();
  }
  EXPECT_EQ(gap.gap(), kMaxWakeGap);
  // A poll round that claims nothing neither widens nor narrows it.
  gap.RoundEnded(/*woken=*/false, /*claimed=*/false);
  EXPECT_EQ(gap.gap(), kMaxWakeGap);
  // The first round that claims a row: back to min_interval.
  gap.RoundEnded(/*woken=*/false, /*claimed=*/true);
  EXPECT_EQ(gap.gap(), milliseconds(10));
}

TEST(WakeGapTest, AMinIntervalAboveTheBoundIsKept) {
  WakeGap gap(milliseconds(200));
  gap.RoundStarted(0);
  gap.RoundEnded(/*woken=*/true, /*claimed=*/false);
  EXPECT_EQ(gap.gap(), milliseconds(200));
}

}  // namespace
}  // namespace room_outbox::relay
