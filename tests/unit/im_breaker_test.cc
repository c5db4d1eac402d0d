#include "core/tencent/im_breaker.h"

#include <gtest/gtest.h>

namespace room_outbox {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using Admission = core::ImBreaker::Admission;
using State = core::ImBreaker::State;
using Verdict = core::ImBreaker::Verdict;

constexpr milliseconds kNoMinimum{0};

class ImBreakerTest : public ::testing::Test {
 protected:
  // A monotonic reading (Clock::SteadyMs) `ms` after an arbitrary origin.
  int64_t At(milliseconds ms) const { return ms.count(); }
  int64_t At(seconds s) const { return milliseconds(s).count(); }

  core::ImBreaker breaker_{{.cooldown = seconds(60)}};
};

TEST_F(ImBreakerTest, ClosedAllowsEverythingAndHealthyAnswersChangeNothing) {
  EXPECT_EQ(breaker_.state(), State::kClosed);
  EXPECT_FALSE(breaker_.is_open());
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(breaker_.Admit(At(seconds(i))), Admission::kAllow);
    EXPECT_EQ(breaker_.Record(Verdict::kHealthy, false, kNoMinimum, At(seconds(i))),
              core::BreakerTransition::kNone);
    EXPECT_EQ(breaker_.Record(Verdict::kInconclusive, false, kNoMinimum, At(seconds(i))),
              core::BreakerTransition::kNone);
  }
  EXPECT_EQ(breaker_.state(), State::kClosed);
}

TEST_F(ImBreakerTest, AnAppFailureOpensItOnceAndNothingIsAdmittedDuringTheCooldown) {
  EXPECT_EQ(breaker_.Record(Verdict::kFailure, false, kNoMinimum, At(seconds(100))),
            core::BreakerTransition::kOpened);
  EXPECT_TRUE(breaker_.is_open());
  EXPECT_EQ(breaker_.state(), State::kOpen);
  EXPECT_EQ(breaker_.reopens_at_ms(), At(seconds(160)));
  // Stragglers that were in flight: no second "opened".
  EXPECT_EQ(breaker_.Record(Verdict::kFailure, false, kNoMinimum, At(seconds(100))),
            core::BreakerTransition::kNone);
  EXPECT_EQ(breaker_.Record(Verdict::kHealthy, false, kNoMinimum, At(seconds(101))),
            core::BreakerTransition::kNone)
      << "only the probe closes it";
  for (int s = 100; s < 160; s += 7) {
    EXPECT_TRUE(breaker_.RejectsAt(At(seconds(s)))) << s;
    EXPECT_EQ(breaker_.Admit(At(seconds(s))), Admission::kReject) << s;
  }
  EXPECT_EQ(breaker_.Admit(At(milliseconds(159'999))), Admission::kReject);
  EXPECT_EQ(breaker_.state(), State::kOpen);
}

TEST_F(ImBreakerTest, AfterTheCooldownExactlyOneProbeIsAdmitted) {
  (void)breaker_.Record(Verdict::kFailure, false, kNoMinimum, At(seconds(0)));
  EXPECT_FALSE(breaker_.RejectsAt(At(seconds(60))));
  EXPECT_EQ(breaker_.Admit(At(seconds(60))), Admission::kProbe);
  EXPECT_EQ(breaker_.state(), State::kHalfOpen);
  EXPECT_TRUE(breaker_.is_open()) << "half-open still counts as open for the gauge";
  EXPECT_TRUE(breaker_.RejectsAt(At(seconds(61))));
  EXPECT_EQ(breaker_.Admit(At(seconds(61))), Admission::kReject) << "the probe is out";
  EXPECT_EQ(breaker_.Admit(At(seconds(300))), Admission::kReject) << "however long it takes";
}

TEST_F(ImBreakerTest, AHealthyProbeClosesIt) {
  (void)breaker_.Record(Verdict::kFailure, false, kNoMinimum, At(seconds(0)));
  ASSERT_EQ(breaker_.Admit(At(seconds(61))), Admission::kProbe);
  EXPECT_EQ(breaker_.Record(Verdict::kHealthy, true, kNoMinimum, At(seconds(62))),
            core::BreakerTransition::kClosed);
  EXPECT_EQ(breaker_.state(), State::kClosed);
  EXPECT_FALSE(breaker_.is_open());
  EXPECT_EQ(breaker_.Admit(At(seconds(62))), Admission::kAllow);
  EXPECT_EQ(breaker_.Admit(At(seconds(62))), Admission::kAllow);
}

TEST_F(ImBreakerTest, AFailedProbeReopensForAFullCooldown) {
  (void)breaker_.Record(Verdict::kFailure, false, kNoMinimum, At(seconds(0)));
  ASSERT_EQ(breaker_.Admit(At(seconds(60))), Admission::kProbe);
  EXPECT_EQ(breaker_.Record(Verdict::kFailure, true, kNoMinimum, At(seconds(61))),
            core::BreakerTransition::kReopened);
  EXPECT_EQ(breaker_.state(), State::kOpen);
  EXPECT_EQ(breaker_.reopens_at_ms(), At(seconds(121)));
  EXPECT_EQ(breaker_.Admit(At(seconds(120))), Admission::kReject);
  EXPECT_EQ(breaker_.Admit(At(seconds(121))), Admission::kProbe);
}

TEST_F(ImBreakerTest, ACancelledProbeLetsTheNextRequestProbe) {
  (void)breaker_.Record(Verdict::kFailure, false, kNoMinimum, At(seconds(0)));
  ASSERT_EQ(breaker_.Admit(At(seconds(60))), Admission::kProbe);
  breaker_.CancelProbe();
  EXPECT_EQ(breaker_.state(), State::kHalfOpen);
  EXPECT_EQ(breaker_.Admit(At(seconds(60))), Admission::kProbe);
  EXPECT_EQ(breaker_.Admit(At(seconds(60))), Admission::kReject);
}

TEST_F(ImBreakerTest, AnInconclusiveProbeLetsTheNextRequestProbe) {
  (void)breaker_.Record(Verdict::kFailure, false, kNoMinimum, At(seconds(0)));
  ASSERT_EQ(breaker_.Admit(At(seconds(60))), Admission::kProbe);
  EXPECT_EQ(breaker_.Record(Verdict::kInconclusive, true, kNoMinimum, At(seconds(63))),
            core::BreakerTransition::kNone);
  EXPECT_EQ(breaker_.state(), State::kHalfOpen);
  EXPECT_EQ(breaker_.Admit(At(seconds(63))), Admission::kProbe);
  EXPECT_EQ(breaker_.Admit(At(seconds(63))), Admission::kReject);
}

TEST_F(ImBreakerTest, AStragglerFailureWhileHalfOpenDoesNotReopen) {
  (void)breaker_.Record(Verdict::kFailure, false, kNoMinimum, At(seconds(0)));
  ASSERT_EQ(breaker_.Admit(At(seconds(60))), Admission::kProbe);
  EXPECT_EQ(breaker_.Record(Verdict::kFailure, false, kNoMinimum, At(seconds(60))),
            core::BreakerTransition::kNone);
  EXPECT_EQ(breaker_.Record(Verdict::kHealthy, true, kNoMinimum, At(seconds(61))),
            core::BreakerTransition::kClosed);
}

TEST_F(ImBreakerTest, LockoutKeepsItOpenAtLeastItsMinimumCooldown) {
  core::ImBreaker short_breaker{{.cooldown = seconds(5)}};
  EXPECT_EQ(short_breaker.Record(Verdict::kFailure, false, seconds(60), At(seconds(10))),
            core::BreakerTransition::kOpened);
  EXPECT_EQ(short_breaker.reopens_at_ms(), At(seconds(70)))
      << "70050: 60 s, not the 5 s configured";
  EXPECT_EQ(short_breaker.Admit(At(seconds(16))), Admission::kReject);
  EXPECT_EQ(short_breaker.Admit(At(seconds(69))), Admission::kReject);
  EXPECT_EQ(short_breaker.Admit(At(seconds(70))), Admission::kProbe);
  // A longer configured cooldown wins over the minimum.
  core::ImBreaker long_breaker{{.cooldown = seconds(120)}};
  (void)long_breaker.Record(Verdict::kFailure, false, seconds(60), At(seconds(0)));
  EXPECT_EQ(long_breaker.reopens_at_ms(), At(seconds(120)));
}

TEST_F(ImBreakerTest, ALaterLockoutWhileOpenPushesTheEndOut) {
  core::ImBreaker b{{.cooldown = seconds(5)}};
  (void)b.Record(Verdict::kFailure, false, kNoMinimum, At(seconds(0)));
  EXPECT_EQ(b.reopens_at_ms(), At(seconds(5)));
  EXPECT_EQ(b.Record(Verdict::kFailure, false, seconds(60), At(seconds(1))),
            core::BreakerTransition::kNone);
  EXPECT_EQ(b.reopens_at_ms(), At(seconds(61)));
  // An earlier end never shortens it.
  (void)b.Record(Verdict::kFailure, false, kNoMinimum, At(seconds(2)));
  EXPECT_EQ(b.reopens_at_ms(), At(seconds(61)));
}

TEST_F(ImBreakerTest, ANonPositiveCooldownMeansSixtySeconds) {
  EXPECT_EQ(core::ImBreaker({.cooldown = milliseconds(0)}).cooldown(), seconds(60));
  EXPECT_EQ(core::ImBreaker({.cooldown = milliseconds(-5)}).cooldown(), seconds(60));
  EXPECT_EQ(core::ImBreaker({.cooldown = milliseconds(1500)}).cooldown(), milliseconds(1500));
}

TEST_F(ImBreakerTest, TheAppScopeOpensOnTheFirstFailure) {
  EXPECT_EQ(core::ImBreaker().failures_to_open(), 1);
  EXPECT_EQ(core::ImBreaker({.failures_to_open = 0}).failures_to_open(), 1);
  EXPECT_EQ(core::ImBreaker().cooldown(), seconds(60));
}

TEST_F(ImBreakerTest, StateNames) {
  EXPECT_STREQ(core::ImBreakerStateName(State::kClosed), "closed");
  EXPECT_STREQ(core::ImBreakerStateName(State::kOpen), "open");
  EXPECT_STREQ(core::ImBreakerStateName(State::kHalfOpen), "half_open");
}

}  // namespace
}  // namespace room_outbox
