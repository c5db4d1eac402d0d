// WakeListener on a real unix datagram socket: its thread coalesces a burst of datagrams into
// wake-ups that count every datagram, wakes again on a later one, and at its end joins the
// thread and removes the socket file. The listener runs on a thread of its own, so the test
// waits for what it needs on the real clock (support/wait.h).
#include "daemon/wake_listener.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <sstream>
#include <string>

#include "config/config.h"
#include "support/wake_socket_fixture.h"
#include "daemon/wake_socket.h"
#include "support/wait.h"
#include "wake_sender.h"
#include "worker/loop_clock.h"

namespace room_outbox::relay {
namespace {

namespace fs = std::filesystem;
using ::room_outbox::testing::Eventually;
using std::chrono::seconds;

class WakeListenerTest : public ::room_outbox::testing::WakeSocketFixture {};

TEST_F(WakeListenerTest, ListenerCoalescesABurstAndCountsEveryDatagram) {
  auto socket = MustBind(path_);
  ASSERT_NE(socket, nullptr);
  relay::LoopSignal signal;
  std::atomic<uint64_t> datagrams{0};
  std::atomic<int> calls{0};
  std::ostringstream log;
  auto logger = MakeStreamLogger(log, LogFormat::kText, spdlog::level::trace);
  auto listener = WakeListener::Start(
      std::move(socket),
      [&](uint64_t n) {
        datagrams += n;
        ++calls;
        signal.Wake();
      },
      *logger, kDefaultWakeMinInterval);
  ASSERT_TRUE(listener) << listener.error().message;
  internal::WakeSender sender(path_);
  for (int i = 0; i < 100; ++i) sender.Notify();
  // Every datagram the kernel accepted is read (the rest were refused while the queue was full:
  // a wake-up was pending then anyway).
  ASSERT_TRUE(Eventually([&] { return datagrams.load() == sender.sent(); }, seconds(10)))
      << datagrams.load() << " of " << sender.sent();
  EXPECT_EQ(sender.sent() + sender.refused(), 100u);
  EXPECT_GE(calls.load(), 1);
  EXPECT_LE(static_cast<uint64_t>(calls.load()), sender.sent());
  // However many datagrams: one pending wake-up.
  EXPECT_TRUE(signal.TakeWake());
  EXPECT_FALSE(signal.TakeWake());

  // A later commit wakes again.
  sender.Notify();
  ASSERT_TRUE(Eventually([&] { return signal.wake_pending(); }, seconds(10)));
  // The listener's end joins its thread and removes the socket file.
  listener->reset();
  EXPECT_FALSE(fs::exists(fs::symlink_status(path_)));
  sender.Notify();
  EXPECT_GE(sender.refused(), 1u);
  EXPECT_EQ(log.str(), "");
}

}  // namespace
}  // namespace room_outbox::relay
