// LateMarks (hook/src/late_marks.h) over a mock store: kept marks are written with their own
// token, a failed write keeps them, a write stops at its first failure and at its limit, a row a
// relay took over counts as nothing written, the bound drops the oldest rows (counted); and the
// background thread's retry delays as plain values.
#include "late_marks.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "mock_hook_store.h"

namespace room_outbox::testing {
namespace {

using internal::HookCounters;
using internal::LateMarkRetry;
using internal::LateMarks;
using std::chrono::milliseconds;
using ::testing::_;
using ::testing::Eq;
using ::testing::InSequence;
using ::testing::Return;
using ::testing::StrictMock;

class LateMarksTest : public ::testing::Test {
 protected:
  void Keep(const std::string& token, std::vector<int64_t> ids) { late_.Keep(token, ids); }

  StrictMock<MockHookStore> store_;
  HookCounters counters_;
  std::vector<std::string> warnings_;
  LateMarks late_{&counters_, [this](LogLevel level, std::string_view line) {
                    if (level == LogLevel::kWarn) warnings_.emplace_back(line);
                  }};
};

TEST_F(LateMarksTest, AFailedWriteKeepsTheMarksAndALaterOneWritesThemWithTheirToken) {
  Keep("tok-a", {11, 12});
  EXPECT_EQ(late_.waiting(), 2u);
  {
    InSequence order;
    EXPECT_CALL(store_, MarkPublished(Eq("tok-a"), IdsAre(std::vector<int64_t>{11, 12})))
        .WillOnce(Return(LostMark()));
    EXPECT_CALL(store_, MarkPublished(Eq("tok-a"), IdsAre(std::vector<int64_t>{11, 12})))
        .WillOnce(Return(core::Result<size_t>(2)));
  }

  auto first = late_.Write(store_, LateMarks::kWritesPerCommit);
  ASSERT_FALSE(first);
  EXPECT_EQ(first.error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(late_.waiting(), 2u);
  EXPECT_EQ(counters_.Snapshot().late_marks_written, 0u);

  auto second = late_.Write(store_, LateMarks::kWritesPerCommit);
  ASSERT_TRUE(second) << second.error().message;
  EXPECT_EQ(*second, 2u);
  EXPECT_TRUE(late_.empty());
  EXPECT_EQ(counters_.Snapshot().late_marks_written, 2u);
  EXPECT_TRUE(warnings_.empty());
}

TEST_F(LateMarksTest, AWriteStopsAtItsFirstFailureAndAtItsLimit) {
  Keep("tok-a", {1});
  Keep("tok-b", {2});
  Keep("tok-b", {3});  // the same lease: one statement
  Keep("tok-c", {4});
  {
    InSequence order;
    EXPECT_CALL(store_, MarkPublished(Eq("tok-a"), IdsAre(std::vector<int64_t>{1})))
        .WillOnce(Return(core::Result<size_t>(1)));
    EXPECT_CALL(store_, MarkPublished(Eq("tok-b"), IdsAre(std::vector<int64_t>{2, 3})))
        .WillOnce(Return(LostMark()));
  }
  EXPECT_FALSE(late_.Write(store_, 10));
  EXPECT_EQ(late_.waiting(), 3u);

  EXPECT_CALL(store_, MarkPublished(Eq("tok-b"), IdsAre(std::vector<int64_t>{2, 3})))
      .WillOnce(Return(core::Result<size_t>(2)));
  auto limited = late_.Write(store_, 1);
  ASSERT_TRUE(limited);
  EXPECT_EQ(*limited, 2u);
  EXPECT_EQ(late_.waiting(), 1u) << "tok-c waits for the next write";
  EXPECT_EQ(counters_.Snapshot().late_marks_written, 3u);
}

TEST_F(LateMarksTest, ARowARelayTookOverIsNotCountedAsWritten) {
  Keep("tok-a", {7});
  // The lease ran out and a relay claimed (or published) the row: the token no longer holds it.
  EXPECT_CALL(store_, MarkPublished(Eq("tok-a"), _)).WillOnce(Return(core::Result<size_t>(0)));

  auto written = late_.Write(store_, LateMarks::kWritesPerCommit);

  ASSERT_TRUE(written);
  EXPECT_EQ(*written, 0u);
  EXPECT_TRUE(late_.empty());
  EXPECT_EQ(counters_.Snapshot().late_marks_written, 0u);
}

TEST_F(LateMarksTest, TheBoundDropsTheOldestRowsWithACountedWarning) {
  LateMarks small(
      &counters_, [this](LogLevel, std::string_view line) { warnings_.emplace_back(line); }, 3);
  const std::vector<int64_t> a = {1, 2};
  const std::vector<int64_t> b = {3, 4};
  small.Keep("tok-a", a);
  small.Keep("tok-b", b);

  EXPECT_EQ(small.waiting(), 3u);
  EXPECT_EQ(counters_.Snapshot().late_marks_dropped, 1u);
  ASSERT_EQ(warnings_.size(), 1u);
  EXPECT_THAT(warnings_[0], ::testing::HasSubstr("may send them again"));
  {
    InSequence order;
    EXPECT_CALL(store_, MarkPublished(Eq("tok-a"), IdsAre(std::vector<int64_t>{2})))
        .WillOnce(Return(core::Result<size_t>(1)));
    EXPECT_CALL(store_, MarkPublished(Eq("tok-b"), IdsAre(std::vector<int64_t>{3, 4})))
        .WillOnce(Return(core::Result<size_t>(2)));
  }
  EXPECT_TRUE(small.Write(store_, 10));
  EXPECT_TRUE(small.empty());
}

TEST_F(LateMarksTest, TheDefaultBoundIsTenThousandRows) {
  EXPECT_EQ(LateMarks::kMaxRows, 10000u);
  std::vector<int64_t> ids(LateMarks::kMaxRows + 5);
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int64_t>(i + 1);
  late_.Keep("tok-a", ids);
  EXPECT_EQ(late_.waiting(), LateMarks::kMaxRows);
  EXPECT_EQ(counters_.Snapshot().late_marks_dropped, 5u);
  EXPECT_CALL(store_, MarkPublished(Eq("tok-a"), _))
      .WillOnce([](const std::string&, std::span<const int64_t> kept) {
        EXPECT_EQ(kept.front(), 6) << "the oldest five went";
        return core::Result<size_t>(kept.size());
      });
  EXPECT_TRUE(late_.Write(store_, 1));
}

TEST(LateMarkRetryTest, DoublesFromOneSecondToThirtyAndStartsOverAfterASuccess) {
  LateMarkRetry retry;
  std::vector<int64_t> delays;
  for (int i = 0; i < 7; ++i) delays.push_back(retry.Failed().count());
  EXPECT_EQ(delays, (std::vector<int64_t>{1000, 2000, 4000, 8000, 16000, 30000, 30000}));
  retry.Succeeded();
  EXPECT_EQ(retry.Failed(), milliseconds(1000));
}

}  // namespace
}  // namespace room_outbox::testing
