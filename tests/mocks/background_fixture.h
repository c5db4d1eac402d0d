// BackgroundFixture: the hook's BackgroundPublisher over its seams as its unit tests hand them
// over, in one place: strict mocks of its store and publisher (owned by the publisher; raw
// pointers kept here), a FakeClock, a WakeSender whose path nobody listens at, and the Hook's
// counters, late marks and room backoff for the options that name them.
//
// Start() runs the publisher with the options a test made from DefaultOptions(); Job() is a
// command committed now (its deadline 2 s away on the clock), a RoomGiftSent row per id; Offer()
// reserves a slot, takes the room's view and offers the job.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "background_publisher.h"
#include "fake_clock.h"
#include "hook_counters.h"
#include "late_marks.h"
#include "mock_hook_store.h"
#include "mock_publisher.h"
#include "room_backoff.h"
#include "wake_sender.h"

namespace room_outbox::testing {

class BackgroundFixture : public ::testing::Test {
 protected:
  // `capacity` commands, sync_publish_timeout 2 s, counting into counters_.
  internal::BackgroundPublisher::Options DefaultOptions(size_t capacity = 8);
  void Start(const internal::BackgroundPublisher::Options& options);
  internal::BackgroundJob Job(const std::string& token, const std::string& room,
                              const std::vector<int64_t>& ids);
  bool Offer(internal::BackgroundJob job, bool earlier_pending = false);

  FakeClock clock_;
  internal::WakeSender wake_{"/tmp/room-outbox-background-test-nobody-listens.sock"};
  internal::HookCounters counters_;
  internal::LateMarks late_{&counters_, {}};
  internal::RoomBackoff backoff_{clock_};
  ::testing::StrictMock<MockHookStore>* store_ = nullptr;
  ::testing::StrictMock<MockPublisher>* publisher_ = nullptr;
  std::unique_ptr<internal::BackgroundPublisher> background_;
};

}  // namespace room_outbox::testing
