// PublishAdmission with plain values and a FakeClock: the breaker (open, the probe, opened mid
// call), the per-message deadline (the first wave from the call's start, later messages from
// their slot), the request budget (a wait, or rate limited when the wait passes the deadline),
// the 70001 resend at the front, and failing what is left.
#include "core/tencent/publish_admission.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>
#include <vector>

#include "fake_clock.h"

namespace room_outbox {
namespace {

using std::chrono::milliseconds;
using Kind = core::PublishAdmission::Kind;

constexpr milliseconds kTimeout{300};
constexpr milliseconds kCooldown{60000};

class PublishAdmissionTest : public ::testing::Test {
 protected:
  // `count` messages queued in call order, `parallel` at once, the call starting now.
  core::PublishAdmission& Admit(size_t count, size_t parallel = 2,
                                core::SharedRateBudget* budget = nullptr) {
    items_.assign(count, core::PublishItem{});
    admission_.emplace(items_, breaker_, budget, kTimeout, parallel, clock_.SteadyMs());
    for (size_t i = 0; i < count; ++i) {
      admission_->Enqueue(i);
    }
    return *admission_;
  }
  core::PublishAdmission::Decision Next() { return admission_->Next(clock_.SteadyMs()); }
  void OpenBreaker() {
    ASSERT_EQ(breaker_.Record(core::ImBreaker::Verdict::kFailure, false, milliseconds(0),
                              clock_.SteadyMs()),
              core::BreakerTransition::kOpened);
  }

  testing::FakeClock clock_;
  core::ImBreaker breaker_{{.cooldown = kCooldown}};
  core::PublishItems items_;
  std::optional<core::PublishAdmission> admission_;
};

TEST_F(PublishAdmissionTest, AClosedBreakerLetsEveryMessageOutInCallOrder) {
  Admit(3);
  for (size_t i = 0; i < 3; ++i) {
    const auto decision = Next();
    EXPECT_EQ(decision.kind, Kind::kSend) << i;
    EXPECT_EQ(decision.index, i);
    admission_->Sent(i);
  }
  EXPECT_EQ(Next().kind, Kind::kEmpty);
  EXPECT_TRUE(admission_->empty());
  for (const core::PublishItem& item : items_) {
    EXPECT_FALSE(item.probe);
    EXPECT_FALSE(item.done) << "only kept back messages are done here";
  }
}

TEST_F(PublishAdmissionTest, TheFirstWaveCountsFromTheCallLaterMessagesFromTheirSlot) {
  const int64_t call_start = clock_.SteadyMs();
  Admit(3, /*parallel=*/2);
  clock_.Advance(milliseconds(40));  // building the bodies, taking the lock
  ASSERT_EQ(Next().kind, Kind::kSend);
  ASSERT_EQ(Next().kind, Kind::kSend);
  clock_.Advance(milliseconds(120));  // a slot frees up
  ASSERT_EQ(Next().kind, Kind::kSend);
  EXPECT_EQ(items_[0].start_ms, call_start) << "Publish must return within the timeout";
  EXPECT_EQ(items_[1].start_ms, call_start);
  EXPECT_EQ(items_[2].start_ms, call_start + 160);
  EXPECT_EQ(items_[0].deadline_ms, call_start + 300);
  EXPECT_EQ(items_[2].deadline_ms, call_start + 160 + 300);
}

TEST_F(PublishAdmissionTest, AnOpenBreakerKeepsEveryMessageBackUnattempted) {
  OpenBreaker();
  Admit(2);
  for (size_t i = 0; i < 2; ++i) {
    const auto decision = Next();
    ASSERT_EQ(decision.kind, Kind::kKeptBack) << i;
    const core::PublishItem& item = items_[decision.index];
    EXPECT_TRUE(item.done);
    EXPECT_EQ(item.outcome.status, core::PublishStatus::kNotAttempted);
    EXPECT_EQ(item.outcome.scope, core::FailureScope::kApp);
    EXPECT_EQ(item.outcome.error, "not attempted: IM circuit breaker open");
    EXPECT_FALSE(item.outcome.attempted()) << "the row is not charged";
  }
  EXPECT_EQ(Next().kind, Kind::kEmpty);
}

TEST_F(PublishAdmissionTest, ABreakerOpenedMidCallHoldsBackTheRest) {
  Admit(3);
  ASSERT_EQ(Next().kind, Kind::kSend);
  admission_->Sent(0);
  OpenBreaker();  // the first answer was an app-scope failure
  EXPECT_EQ(Next().kind, Kind::kKeptBack);
  EXPECT_EQ(Next().kind, Kind::kKeptBack);
  EXPECT_EQ(items_[1].outcome.status, core::PublishStatus::kNotAttempted);
  EXPECT_EQ(items_[2].outcome.status, core::PublishStatus::kNotAttempted);
}

TEST_F(PublishAdmissionTest, AfterTheCooldownOneProbeGoesOutAndTheCallWaitsForIt) {
  OpenBreaker();
  clock_.Advance(kCooldown);
  Admit(2);
  const auto probe = Next();
  ASSERT_EQ(probe.kind, Kind::kSend);
  EXPECT_TRUE(items_[probe.index].probe);
  admission_->Sent(probe.index);
  const auto held = Next();
  EXPECT_EQ(held.kind, Kind::kWaitForProbe);
  EXPECT_EQ(held.index, 1u);
  EXPECT_FALSE(items_[1].done) << "waiting, not kept back";
  // The probe's answer closes the breaker: the rest goes out.
  ASSERT_EQ(
      breaker_.Record(core::ImBreaker::Verdict::kHealthy, true, milliseconds(0), clock_.SteadyMs()),
      core::BreakerTransition::kClosed);
  admission_->ProbeRecorded(items_[0]);
  EXPECT_FALSE(items_[0].probe);
  const auto next = Next();
  EXPECT_EQ(next.kind, Kind::kSend);
  EXPECT_EQ(next.index, 1u);
  EXPECT_FALSE(items_[1].probe);
}

TEST_F(PublishAdmissionTest, AFailedProbeKeepsTheRestBack) {
  OpenBreaker();
  clock_.Advance(kCooldown);
  Admit(2);
  ASSERT_EQ(Next().kind, Kind::kSend);
  admission_->Sent(0);
  ASSERT_EQ(
      breaker_.Record(core::ImBreaker::Verdict::kFailure, true, milliseconds(0), clock_.SteadyMs()),
      core::BreakerTransition::kReopened);
  admission_->ProbeRecorded(items_[0]);
  const auto rest = Next();
  EXPECT_EQ(rest.kind, Kind::kKeptBack);
  EXPECT_EQ(items_[1].outcome.status, core::PublishStatus::kNotAttempted);
}

TEST_F(PublishAdmissionTest, AProbeThatNeverWentOutLetsTheNextMessageProbe) {
  OpenBreaker();
  clock_.Advance(kCooldown);
  Admit(2);
  ASSERT_EQ(Next().kind, Kind::kSend);
  ASSERT_TRUE(items_[0].probe);
  // Its transfer could not start (e.g. no UserSig): it proved nothing.
  items_[0].done = true;
  admission_->ReleaseProbe(items_[0], clock_.SteadyMs());
  EXPECT_FALSE(items_[0].probe);
  EXPECT_EQ(breaker_.state(), core::ImBreaker::State::kHalfOpen);
  const auto next = Next();
  EXPECT_EQ(next.kind, Kind::kSend) << "not a wait for a probe that is not out";
  EXPECT_TRUE(items_[1].probe);
}

TEST_F(PublishAdmissionTest, WithoutATokenTheMessageWaitsForTheNextOne) {
  core::SharedRateBudget budget(10, clock_);  // a burst of one, then one per 100ms
  Admit(2, 2, &budget);
  ASSERT_EQ(Next().kind, Kind::kSend);
  const auto wait = Next();
  EXPECT_EQ(wait.kind, Kind::kWaitForBudget);
  EXPECT_EQ(wait.index, 1u);
  EXPECT_EQ(wait.wait, milliseconds(100));
  EXPECT_FALSE(items_[1].done);
  clock_.Advance(milliseconds(60));
  EXPECT_EQ(Next().wait, milliseconds(40));
  clock_.Advance(milliseconds(40));
  EXPECT_EQ(Next().kind, Kind::kSend);
}

// Waiting costs one wake-up for every message that could start, not one per token.
TEST_F(PublishAdmissionTest, ABudgetWaitGathersTheTokensOfEveryReadyMessage) {
  core::SharedRateBudget budget(200, clock_);  // a burst of 20, then one per 5ms
  while (budget.TryAcquire() == std::chrono::microseconds::zero()) {
  }
  Admit(6, 4, &budget);
  const auto one = admission_->Next(clock_.SteadyMs(), 1);
  EXPECT_EQ(one.kind, Kind::kWaitForBudget);
  EXPECT_EQ(one.wait, milliseconds(5)) << "one ready message waits for one token";
  const auto four = admission_->Next(clock_.SteadyMs(), 4);
  EXPECT_EQ(four.kind, Kind::kWaitForBudget);
  EXPECT_EQ(four.wait, milliseconds(20)) << "four ready messages wait once for four tokens";
  clock_.Advance(four.wait);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(admission_->Next(clock_.SteadyMs(), 4 - i).kind, Kind::kSend) << i;
  }
  EXPECT_EQ(admission_->Next(clock_.SteadyMs(), 4).kind, Kind::kWaitForBudget);
}

TEST_F(PublishAdmissionTest, ABudgetWaitGathersForAtMostTheBatchBound) {
  core::SharedRateBudget budget(50, clock_);  // a burst of 5, then one per 20ms
  while (budget.TryAcquire() == std::chrono::microseconds::zero()) {
  }
  Admit(8, 8, &budget);
  const auto wait = admission_->Next(clock_.SteadyMs(), 8);
  EXPECT_EQ(wait.kind, Kind::kWaitForBudget);
  EXPECT_EQ(wait.wait, milliseconds(20) + core::kMaxBudgetBatchWait)
      << "the first token's wait plus the bound, not the 100ms of five tokens";
}

TEST_F(PublishAdmissionTest, ABudgetWaitGathersOnlyUntilJustBeforeTheDeadline) {
  core::SharedRateBudget budget(100, clock_);  // a burst of 10, then one per 10ms
  Admit(3, 3, &budget);
  clock_.Advance(milliseconds(285));  // the first wave's messages have 15ms left
  while (budget.TryAcquire() == std::chrono::microseconds::zero()) {
  }
  const auto wait = admission_->Next(clock_.SteadyMs(), 3);
  EXPECT_EQ(wait.kind, Kind::kWaitForBudget);
  EXPECT_EQ(wait.wait, milliseconds(14)) << "not the 30ms of three tokens: 1ms before the deadline";
}

TEST_F(PublishAdmissionTest, ATokenLaterThanTheDeadlineIsARateLimit) {
  core::SharedRateBudget budget(1, clock_);  // a burst of one, then one per second
  Admit(2, 2, &budget);
  ASSERT_EQ(Next().kind, Kind::kSend);
  const auto limited = Next();
  ASSERT_EQ(limited.kind, Kind::kKeptBack);
  const core::PublishOutcome& outcome = items_[1].outcome;
  EXPECT_EQ(outcome.status, core::PublishStatus::kRateLimited);
  EXPECT_EQ(outcome.scope, core::FailureScope::kGlobalRate);
  EXPECT_EQ(outcome.error, "request budget: no slot within 300ms");
  EXPECT_EQ(Next().kind, Kind::kEmpty);
}

TEST_F(PublishAdmissionTest, AProbeTheBudgetKeepsBackIsReleased) {
  core::SharedRateBudget budget(1, clock_);
  OpenBreaker();
  clock_.Advance(kCooldown);
  ASSERT_EQ(budget.TryAcquire(), std::chrono::microseconds::zero());  // another call's token
  Admit(2, 2, &budget);
  const auto limited = Next();
  ASSERT_EQ(limited.kind, Kind::kKeptBack);
  EXPECT_EQ(items_[0].outcome.status, core::PublishStatus::kRateLimited);
  EXPECT_FALSE(items_[0].probe) << "released: it never reached IM";
  EXPECT_EQ(breaker_.Admit(clock_.SteadyMs()), core::ImBreaker::Admission::kProbe)
      << "the next request probes instead";
}

TEST_F(PublishAdmissionTest, AResendGoesFirstAndKeepsItsDeadline) {
  Admit(2);
  ASSERT_EQ(Next().kind, Kind::kSend);
  const int64_t deadline = items_[0].deadline_ms;
  clock_.Advance(milliseconds(100));  // IM answered 70001
  admission_->Resend(0);
  const auto again = Next();
  EXPECT_EQ(again.kind, Kind::kSend);
  EXPECT_EQ(again.index, 0u);
  EXPECT_EQ(items_[0].deadline_ms, deadline) << "the resend shares the message's timeout";
  EXPECT_EQ(Next().index, 1u);
}

TEST_F(PublishAdmissionTest, FailRemainingEndsWhatIsNotDoneAndReleasesAProbe) {
  OpenBreaker();
  clock_.Advance(kCooldown);
  Admit(3);
  ASSERT_EQ(Next().kind, Kind::kSend);  // the probe, in flight when libcurl failed
  admission_->Sent(0);
  items_[2].done = true;  // already answered
  items_[2].outcome.status = core::PublishStatus::kPublished;
  admission_->FailRemaining("curl_multi_poll: out of memory", clock_.SteadyMs());
  for (size_t i : {0u, 1u}) {
    EXPECT_TRUE(items_[i].done) << i;
    EXPECT_EQ(items_[i].outcome.status, core::PublishStatus::kRetryable) << i;
    EXPECT_EQ(items_[i].outcome.error, "curl_multi_poll: out of memory") << i;
  }
  EXPECT_EQ(items_[2].outcome.status, core::PublishStatus::kPublished) << "a final outcome stays";
  EXPECT_TRUE(admission_->empty());
  EXPECT_EQ(breaker_.Admit(clock_.SteadyMs()), core::ImBreaker::Admission::kProbe)
      << "the probe proved nothing: the next request probes";
}

}  // namespace
}  // namespace room_outbox
