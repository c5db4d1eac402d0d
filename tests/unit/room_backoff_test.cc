// RoomBackoff (hook/src/room_backoff.h) with plain values on a hand-driven clock: a room refusal
// opens 1 s, each further one doubles it up to 16 s, a delivery clears it, a refusal long after
// the last backoff starts over, other rooms are untouched, and the table keeps at most its bound,
// forgetting the room refused longest ago. NoteRoomOutcome: which outcomes open, clear or leave.
#include "room_backoff.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fake_clock.h"
#include "mock_publisher.h"

namespace room_outbox::testing {
namespace {

using internal::RoomBackoff;
using std::chrono::milliseconds;

class RoomBackoffTest : public ::testing::Test {
 protected:
  FakeClock clock_;
  RoomBackoff backoff_{clock_};
};

TEST_F(RoomBackoffTest, AFirstRefusalBacksTheRoomOffForOneSecond) {
  EXPECT_FALSE(backoff_.BackedOff("room-1"));
  EXPECT_EQ(backoff_.Refused("room-1"), milliseconds(1000));
  EXPECT_TRUE(backoff_.BackedOff("room-1"));
  clock_.Advance(milliseconds(999));
  EXPECT_TRUE(backoff_.BackedOff("room-1"));
  clock_.Advance(milliseconds(1));
  EXPECT_FALSE(backoff_.BackedOff("room-1"));
}

TEST_F(RoomBackoffTest, EachFurtherRefusalDoublesTheBackoffUpToSixteenSeconds) {
  std::vector<int64_t> opened;
  for (int i = 0; i < 7; ++i) {
    const milliseconds backoff = backoff_.Refused("room-1");
    opened.push_back(backoff.count());
    clock_.Advance(backoff - milliseconds(1));
    EXPECT_TRUE(backoff_.BackedOff("room-1")) << "refusal " << i;
    clock_.Advance(milliseconds(1));
    EXPECT_FALSE(backoff_.BackedOff("room-1")) << "refusal " << i;
  }
  EXPECT_EQ(opened, (std::vector<int64_t>{1000, 2000, 4000, 8000, 16000, 16000, 16000}));
}

TEST_F(RoomBackoffTest, ADeliveredMessageClearsTheBackoff) {
  backoff_.Refused("room-1");
  backoff_.Refused("room-1");
  EXPECT_EQ(backoff_.Refused("room-1"), milliseconds(4000));
  backoff_.Delivered("room-1");
  EXPECT_FALSE(backoff_.BackedOff("room-1"));
  EXPECT_EQ(backoff_.rooms(), 0u);
  EXPECT_EQ(backoff_.Refused("room-1"), milliseconds(1000)) << "a cleared room starts over";
}

TEST_F(RoomBackoffTest, ARefusalLongAfterTheLastBackoffEndedStartsOverAtOneSecond) {
  EXPECT_EQ(backoff_.Refused("room-1"), milliseconds(1000));
  EXPECT_EQ(backoff_.Refused("room-1"), milliseconds(2000));
  // Over at +2 s; remembered for 16 s more.
  clock_.Advance(milliseconds(2000 + 16000 - 1));
  EXPECT_EQ(backoff_.Refused("room-1"), milliseconds(4000));
  clock_.Advance(milliseconds(4000 + 16000));
  EXPECT_EQ(backoff_.Refused("room-1"), milliseconds(1000));
}

TEST_F(RoomBackoffTest, OtherRoomsAreNotBackedOff) {
  backoff_.Refused("room-hot");
  EXPECT_TRUE(backoff_.BackedOff("room-hot"));
  EXPECT_FALSE(backoff_.BackedOff("room-quiet"));
  backoff_.Delivered("room-quiet");  // clears nothing of another room
  EXPECT_TRUE(backoff_.BackedOff("room-hot"));
}

TEST_F(RoomBackoffTest, TheTableKeepsAtMostItsBoundAndForgetsTheRoomRefusedLongestAgo) {
  RoomBackoff small(clock_, 3);
  small.Refused("a");
  small.Refused("b");
  small.Refused("c");
  small.Refused("a");  // refused again: now the most recent
  small.Refused("d");  // a fourth room: b goes
  EXPECT_EQ(small.rooms(), 3u);
  EXPECT_FALSE(small.BackedOff("b"));
  EXPECT_TRUE(small.BackedOff("a"));
  EXPECT_TRUE(small.BackedOff("c"));
  EXPECT_TRUE(small.BackedOff("d"));
  EXPECT_EQ(small.Refused("a"), milliseconds(4000)) << "a kept its history";
}

TEST_F(RoomBackoffTest, TheDefaultBoundIs4096Rooms) {
  EXPECT_EQ(RoomBackoff::kMaxRooms, 4096u);
  for (size_t i = 0; i <= RoomBackoff::kMaxRooms; ++i) {
    backoff_.Refused("room-" + std::to_string(i));
  }
  EXPECT_EQ(backoff_.rooms(), RoomBackoff::kMaxRooms);
  EXPECT_FALSE(backoff_.BackedOff("room-0"));
  EXPECT_TRUE(backoff_.BackedOff("room-4096"));
}

class NoteRoomOutcomeTest : public RoomBackoffTest {
 protected:
  void Note(const core::PublishOutcome& outcome) {
    internal::NoteRoomOutcome(backoff_, "room-1", outcome, log_);
  }
  static core::PublishOutcome FreqCtrl() {
    core::PublishOutcome out = FailedWith(core::PublishStatus::kRateLimited,
                                          "dropped by IM: MsgFreqCtrl", core::FailureScope::kRoom);
    out.definite_drop = true;
    return out;
  }

  std::vector<std::pair<LogLevel, std::string>> lines_;
  LogCallback log_ = [this](LogLevel level, std::string_view line) {
    lines_.emplace_back(level, std::string(line));
  };
};

TEST_F(NoteRoomOutcomeTest, ARoomRefusalOpensTheBackoffWithOneWarnLine) {
  Note(FreqCtrl());
  EXPECT_TRUE(backoff_.BackedOff("room-1"));
  ASSERT_EQ(lines_.size(), 1u);
  EXPECT_EQ(lines_[0].first, LogLevel::kWarn);
  EXPECT_THAT(lines_[0].second, ::testing::HasSubstr("room_id=room-1 backoff_ms=1000"));
  EXPECT_THAT(lines_[0].second, ::testing::HasSubstr("MsgFreqCtrl"));
}

TEST_F(NoteRoomOutcomeTest, OnlyAPublishedMessageClearsIt) {
  Note(FreqCtrl());
  Note(Skipped());  // a type never sent says nothing about the group
  Note(FailedWith(core::PublishStatus::kRetryable, "HTTP 502"));
  Note(FailedWith(core::PublishStatus::kRateLimited, "im error 60007",
                  core::FailureScope::kGlobalRate));
  EXPECT_TRUE(backoff_.BackedOff("room-1"));
  EXPECT_EQ(lines_.size(), 1u);
  Note(Published());
  EXPECT_FALSE(backoff_.BackedOff("room-1"));
  EXPECT_EQ(backoff_.rooms(), 0u);
}

}  // namespace
}  // namespace room_outbox::testing
