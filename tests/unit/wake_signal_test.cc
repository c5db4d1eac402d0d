// Wake-ups on the StopSignal: a level that coalesces, ends only the idle wait (WaitForWake,
// Clock::IdleFor), never a plain WaitFor/SleepFor, and stays pending until taken.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "daemon/heartbeat_clock.h"
#include "fake_clock.h"
#include "telemetry/health.h"
#include "worker/loop_clock.h"

namespace room_outbox {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using Steady = std::chrono::steady_clock;

TEST(WakeSignalTest, WakeUpsCoalesceIntoOneUntilTaken) {
  StopSignal signal;
  EXPECT_FALSE(signal.wake_pending());
  EXPECT_FALSE(signal.TakeWake());
  for (int i = 0; i < 100; ++i) signal.Wake();
  EXPECT_TRUE(signal.wake_pending());
  EXPECT_TRUE(signal.TakeWake());
  EXPECT_FALSE(signal.wake_pending());
  EXPECT_FALSE(signal.TakeWake());
  EXPECT_FALSE(signal.stop_requested());
}

TEST(WakeSignalTest, APendingWakeUpEndsTheIdleWaitAtOnceAndStaysPending) {
  StopSignal signal;
  signal.Wake();
  const auto start = Steady::now();
  EXPECT_FALSE(signal.WaitForWake(seconds(30)));  // false: not a stop
  EXPECT_LT(Steady::now() - start, seconds(20));  // did not wait out the 30 s
  EXPECT_TRUE(signal.wake_pending());
}

TEST(WakeSignalTest, AWakeUpFromAnotherThreadEndsAnIdleWaitUnderWay) {
  StopSignal signal;
  std::thread waker([&] {
    std::this_thread::sleep_for(milliseconds(20));
    signal.Wake();
  });
  const auto start = Steady::now();
  EXPECT_FALSE(signal.WaitForWake(seconds(30)));
  EXPECT_LT(Steady::now() - start, seconds(20));
  waker.join();
  EXPECT_TRUE(signal.TakeWake());
}

TEST(WakeSignalTest, AWakeUpDoesNotEndAPlainWaitLikeAPaceWait) {
  StopSignal signal;
  signal.Wake();
  const auto start = Steady::now();
  EXPECT_FALSE(signal.WaitFor(milliseconds(60)));
  // The whole 60 ms passed (a condition variable's timed wait never ends early with a false
  // predicate), and the wake-up is still there for the idle wait.
  EXPECT_GE(Steady::now() - start, milliseconds(60));
  EXPECT_TRUE(signal.wake_pending());
}

TEST(WakeSignalTest, AStopEndsBothWaitsAndIsReportedAsAStop) {
  StopSignal signal;
  signal.RequestStop();
  EXPECT_TRUE(signal.WaitFor(seconds(30)));
  EXPECT_TRUE(signal.WaitForWake(seconds(30)));
  SystemLoopClock clock;
  EXPECT_TRUE(clock.IdleFor(seconds(30), signal));
  EXPECT_TRUE(clock.SleepFor(seconds(30), signal));
}

TEST(WakeSignalTest, SystemClockIdleForEndsOnAWakeUpButSleepForDoesNot) {
  StopSignal signal;
  SystemLoopClock clock;
  signal.Wake();
  const auto start = Steady::now();
  EXPECT_FALSE(clock.IdleFor(seconds(30), signal));
  EXPECT_LT(Steady::now() - start, seconds(20));
  EXPECT_FALSE(clock.SleepFor(milliseconds(30), signal));
  EXPECT_GE(Steady::now() - start, milliseconds(30));
  EXPECT_TRUE(signal.wake_pending());
}

TEST(WakeSignalTest, FakeClockIdlesZeroWithAWakeUpPendingAndSleepsInFullWithout) {
  testing::FakeClock clock;
  StopSignal signal;
  EXPECT_FALSE(clock.IdleFor(milliseconds(1000), signal));
  signal.Wake();
  EXPECT_FALSE(clock.IdleFor(milliseconds(1000), signal));
  EXPECT_FALSE(clock.SleepFor(milliseconds(50), signal));
  EXPECT_EQ(clock.sleeps(),
            (std::vector<milliseconds>{milliseconds(1000), milliseconds(0), milliseconds(50)}));
  EXPECT_TRUE(signal.wake_pending());
}

TEST(WakeSignalTest, HeartbeatClockIdleForEndsAtTheSliceThatFindsAWakeUp) {
  testing::FakeClock inner;
  relay::Heartbeat heartbeat(nullptr);
  relay::HeartbeatClock clock(inner, heartbeat, milliseconds(1000));
  StopSignal signal;
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
