// LoopSignal's waits and SystemLoopClock on the real monotonic clock: a pending wake-up ends the
// idle wait (WaitForWake, SystemLoopClock::IdleFor) at once and stays pending, a wake-up from
// another thread ends one under way, a plain wait (WaitFor, SleepFor: the pacing waits inside a
// round) runs in full, and a stop ends every wait. These measure real time, so they run with the
// real parts, not in the unit suite.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "worker/loop_clock.h"

namespace room_outbox {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using Steady = std::chrono::steady_clock;

TEST(LoopClockTest, APendingWakeUpEndsTheIdleWaitAtOnceAndStaysPending) {
  relay::LoopSignal signal;
  signal.Wake();
  const auto start = Steady::now();
  EXPECT_FALSE(signal.WaitForWake(seconds(30)));  // false: not a stop
  EXPECT_LT(Steady::now() - start, seconds(20));  // did not wait out the 30 s
  EXPECT_TRUE(signal.wake_pending());
}

TEST(LoopClockTest, AWakeUpFromAnotherThreadEndsAnIdleWaitUnderWay) {
  relay::LoopSignal signal;
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

TEST(LoopClockTest, AWakeUpDoesNotEndAPlainWaitLikeAPacedRoomsWait) {
  relay::LoopSignal signal;
  signal.Wake();
  const auto start = Steady::now();
  EXPECT_FALSE(signal.WaitFor(milliseconds(60)));
  // The whole 60 ms passed (a condition variable's timed wait never ends early with a false
  // predicate), and the wake-up is still there for the idle wait.
  EXPECT_GE(Steady::now() - start, milliseconds(60));
  EXPECT_TRUE(signal.wake_pending());
}

TEST(LoopClockTest, AStopEndsBothWaitsAndIsReportedAsAStop) {
  relay::LoopSignal signal;
  signal.RequestStop();
  EXPECT_TRUE(signal.WaitFor(seconds(30)));
  EXPECT_TRUE(signal.WaitForWake(seconds(30)));
  relay::SystemLoopClock clock;
  EXPECT_TRUE(clock.IdleFor(seconds(30), signal));
  EXPECT_TRUE(clock.SleepFor(seconds(30), signal));
}

TEST(LoopClockTest, SystemClockIdleForEndsOnAWakeUpButSleepForDoesNot) {
  relay::LoopSignal signal;
  relay::SystemLoopClock clock;
  signal.Wake();
  const auto start = Steady::now();
  EXPECT_FALSE(clock.IdleFor(seconds(30), signal));
  EXPECT_LT(Steady::now() - start, seconds(20));
  EXPECT_FALSE(clock.SleepFor(milliseconds(30), signal));
  EXPECT_GE(Steady::now() - start, milliseconds(30));
  EXPECT_TRUE(signal.wake_pending());
}

}  // namespace
}  // namespace room_outbox
