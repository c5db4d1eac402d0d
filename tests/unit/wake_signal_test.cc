// Wake-ups on the LoopSignal: a level that coalesces and stays pending until taken; the fake
// clock's and the heartbeat clock's idle sleeps end on one, their plain sleeps do not. The same
// on the real clock (LoopSignal's waits, SystemLoopClock): tests/integration/loop_clock_test.cc.
#include <gtest/gtest.h>

#include <chrono>
#include <vector>

#include "daemon/beat_on_use_clock.h"
#include "fake_clock.h"
#include "telemetry/health.h"
#include "worker/loop_clock.h"

namespace room_outbox {
namespace {

using std::chrono::milliseconds;

TEST(WakeSignalTest, WakeUpsCoalesceIntoOneUntilTaken) {
  relay::LoopSignal signal;
  EXPECT_FALSE(signal.wake_pending());
  EXPECT_FALSE(signal.TakeWake());
  for (int i = 0; i < 100; ++i) signal.Wake();
  EXPECT_TRUE(signal.wake_pending());
  EXPECT_TRUE(signal.TakeWake());
  EXPECT_FALSE(signal.wake_pending());
  EXPECT_FALSE(signal.TakeWake());
  EXPECT_FALSE(signal.stop_requested());
}

TEST(WakeSignalTest, FakeClockIdlesZeroWithAWakeUpPendingAndSleepsInFullWithout) {
  testing::FakeClock clock;
  relay::LoopSignal signal;
  EXPECT_FALSE(clock.IdleFor(milliseconds(1000), signal));
  signal.Wake();
  EXPECT_FALSE(clock.IdleFor(milliseconds(1000), signal));
  EXPECT_FALSE(clock.SleepFor(milliseconds(50), signal));
  EXPECT_EQ(clock.sleeps(),
            (std::vector<milliseconds>{milliseconds(1000), milliseconds(0), milliseconds(50)}));
  EXPECT_TRUE(signal.wake_pending());
}

TEST(WakeSignalTest, BeatOnUseClockIdleForEndsAtTheSliceThatFindsAWakeUp) {
  testing::FakeClock inner;
  relay::Heartbeat heartbeat(nullptr);
  relay::BeatOnUseClock clock(inner, heartbeat, milliseconds(1000));
  relay::LoopSignal signal;
  int slices = 0;
  inner.on_sleep = [&] {
    if (++slices == 2) signal.Wake();
  };
  EXPECT_FALSE(clock.IdleFor(milliseconds(10000), signal));
  // Two slices of 1 s, then the wake-up ended the idle sleep (a plain sleep takes all ten).
  EXPECT_EQ(inner.sleeps(), (std::vector<milliseconds>{milliseconds(1000), milliseconds(1000)}));
  EXPECT_FALSE(clock.SleepFor(milliseconds(3000), signal));
  EXPECT_EQ(inner.sleeps().size(), 5u);
}

}  // namespace
}  // namespace room_outbox
