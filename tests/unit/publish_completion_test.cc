// The completion step with plain values: what a finished transfer means (TransferOutcome), what
// it tells the breaker (BreakerVerdict), and PublishCompletion: rate feedback to the budget, the
// breaker's transition on the outcome, the probe's end, and the one 70001 resend within the
// message's deadline.
#include "core/tencent/publish_completion.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "fake_clock.h"

namespace room_outbox {
namespace {

using std::chrono::milliseconds;

constexpr milliseconds kTimeout{300};
constexpr char kTarget[] = "POST 127.0.0.1:8080";

core::TransferPool::Finished Failed(CURLcode result, bool sent) {
  core::TransferPool::Finished f;
  f.result = result;
  f.sent = sent;
  return f;
}

core::TransferPool::Finished Answered(int http_status, std::string body) {
  core::TransferPool::Finished f;
  f.result = CURLE_OK;
  f.http_status = http_status;
  f.sent = true;
  f.response = std::move(body);
  return f;
}

std::string ImError(int code) {
  return R"({"ActionStatus":"FAIL","ErrorCode":)" + std::to_string(code) + R"(,"ErrorInfo":"x"})";
}

TEST(TransferOutcomeTest, WhatAFinishedTransferMeans) {
  struct Case {
    const char* name;
    core::TransferPool::Finished finished;
    core::PublishStatus status;
    const char* error;  // a prefix
  } cases[] = {
      {"timeout after the request went out", Failed(CURLE_OPERATION_TIMEDOUT, true),
       core::PublishStatus::kUnknown, "timeout after 300ms"},
      {"timeout before it went out", Failed(CURLE_OPERATION_TIMEDOUT, false),
       core::PublishStatus::kRetryable, "timeout after 300ms before the request was sent"},
      {"connection dropped after sending", Failed(CURLE_RECV_ERROR, true),
       core::PublishStatus::kUnknown, "curl_easy_perform(POST 127.0.0.1:8080)"},
      {"nothing came back", Failed(CURLE_GOT_NOTHING, true), core::PublishStatus::kUnknown,
       "curl_easy_perform"},
      {"cannot connect", Failed(CURLE_COULDNT_CONNECT, false), core::PublishStatus::kRetryable,
       "curl_easy_perform(POST 127.0.0.1:8080)"},
      {"IM accepted it", Answered(200, R"({"ActionStatus":"OK","ErrorCode":0})"),
       core::PublishStatus::kPublished, ""},
      {"IM refused it", Answered(200, ImError(10010)), core::PublishStatus::kPermanent,
       "im error 10010"},
  };
  for (const Case& c : cases) {
    const core::PublishOutcome out = core::TransferOutcome(c.finished, kTimeout, kTarget);
    EXPECT_EQ(out.status, c.status) << c.name << ": " << out.error;
    EXPECT_EQ(out.error.rfind(c.error, 0), 0u) << c.name << ": " << out.error;
  }
  core::TransferPool::Finished huge = Failed(CURLE_WRITE_ERROR, true);
  huge.too_large = true;
  huge.http_status = 200;
  const core::PublishOutcome out = core::TransferOutcome(huge, kTimeout, kTarget);
  EXPECT_EQ(out.status, core::PublishStatus::kUnknown);
  EXPECT_EQ(out.error, "IM response larger than 65536 bytes");
  EXPECT_EQ(out.http_status, 200);
}

TEST(BreakerVerdictTest, OnlyImsOwnAnswersProveTheAppWorks) {
  const auto verdict = [](int http_status, const std::string& body) {
    return core::BreakerVerdict(
        core::TransferOutcome(Answered(http_status, body), kTimeout, kTarget));
  };
  EXPECT_EQ(verdict(200, R"({"ActionStatus":"OK","ErrorCode":0})"),
            core::ImBreaker::Verdict::kHealthy);
  EXPECT_EQ(verdict(200, ImError(10010)), core::ImBreaker::Verdict::kHealthy)
      << "about the message";
  EXPECT_EQ(verdict(200, ImError(70003)), core::ImBreaker::Verdict::kFailure);
  EXPECT_EQ(verdict(403, ""), core::ImBreaker::Verdict::kFailure) << "not IM's API";
  EXPECT_EQ(verdict(502, ""), core::ImBreaker::Verdict::kInconclusive);
  EXPECT_EQ(verdict(200, "not json"), core::ImBreaker::Verdict::kInconclusive);
  EXPECT_EQ(core::BreakerVerdict(
                core::TransferOutcome(Failed(CURLE_OPERATION_TIMEDOUT, true), kTimeout, kTarget)),
            core::ImBreaker::Verdict::kInconclusive);
}

class PublishCompletionTest : public ::testing::Test {
 protected:
  PublishCompletionTest() {
    items_.assign(2, core::PublishItem{});
    for (core::PublishItem& item : items_) {
      item.started = true;
      item.start_ms = clock_.SteadyMs();
      item.deadline_ms = clock_.SteadyMs() + kTimeout.count();
    }
    admission_.emplace(items_, breaker_, &budget_, kTimeout, 2, clock_.SteadyMs());
    completion_.emplace(items_, *admission_, breaker_, &budget_, sig_cache_);
    EXPECT_TRUE(sig_cache_.Get());
  }
  core::PublishOutcome Outcome(int http_status, const std::string& body) const {
    return core::TransferOutcome(Answered(http_status, body), kTimeout, kTarget);
  }

  testing::FakeClock clock_;
  core::ImBreaker breaker_{{.cooldown = milliseconds(60000)}};
  core::SharedRateBudget budget_{40, clock_};
  core::UserSigCache sig_cache_{1400000000, "admin", "secret", std::chrono::seconds(86400),
                                [] { return int64_t{1'700'000'000}; }};
  core::PublishItems items_;
  std::optional<core::PublishAdmission> admission_;
  std::optional<core::PublishCompletion> completion_;
};

TEST_F(PublishCompletionTest, AnAnswerIsFinal) {
  completion_->Complete(0, Outcome(200, R"({"ActionStatus":"OK","ErrorCode":0})"),
                        clock_.SteadyMs());
  EXPECT_TRUE(items_[0].done);
  EXPECT_EQ(items_[0].outcome.status, core::PublishStatus::kPublished);
  EXPECT_TRUE(admission_->empty());
}

TEST_F(PublishCompletionTest, OnlyGlobalRateLimitsSlowTheBudget) {
  completion_->Complete(0, Outcome(200, ImError(10023)), clock_.SteadyMs());  // room scope
  EXPECT_EQ(budget_.effective_rate(), 40) << "a group over its cap says nothing about the app";
  completion_->Complete(1, Outcome(200, ImError(60007)), clock_.SteadyMs());
  EXPECT_EQ(budget_.effective_rate(), 20);
  EXPECT_EQ(items_[1].outcome.scope, core::FailureScope::kGlobalRate);
  EXPECT_TRUE(items_[1].outcome.budget_slowed) << "the caller may send on through the budget";
  EXPECT_FALSE(items_[0].outcome.budget_slowed);
}

TEST_F(PublishCompletionTest, NoAnswerSaysNothingAboutTheRate) {
  budget_.OnRateLimited();
  clock_.Advance(milliseconds(5000));
  completion_->Complete(
      0, core::TransferOutcome(Failed(CURLE_COULDNT_CONNECT, false), kTimeout, kTarget),
      clock_.SteadyMs());
  EXPECT_EQ(budget_.effective_rate(), 20) << "no clean answer, no recovery";
  completion_->Complete(1, Outcome(200, ImError(10010)), clock_.SteadyMs());
  EXPECT_DOUBLE_EQ(budget_.effective_rate(), 22) << "IM answered without a rate limit";
}

TEST_F(PublishCompletionTest, AnAppScopeAnswerOpensTheBreakerAndSaysSo) {
  completion_->Complete(0, Outcome(200, ImError(70003)), clock_.SteadyMs());
  EXPECT_EQ(items_[0].outcome.breaker, core::BreakerTransition::kOpened);
  EXPECT_TRUE(breaker_.is_open());
  EXPECT_EQ(breaker_.reopens_at_ms(), clock_.SteadyMs() + 60000);
}

TEST_F(PublishCompletionTest, TheProbesAnswerEndsItsAdmission) {
  ASSERT_EQ(breaker_.Record(core::ImBreaker::Verdict::kFailure, false, milliseconds(0),
                            clock_.SteadyMs()),
            core::BreakerTransition::kOpened);
  clock_.Advance(milliseconds(60000));
  ASSERT_EQ(breaker_.Admit(clock_.SteadyMs()), core::ImBreaker::Admission::kProbe);
  items_[0].probe = true;
  admission_->Sent(0);
  completion_->Complete(0, Outcome(200, R"({"ActionStatus":"OK","ErrorCode":0})"),
                        clock_.SteadyMs());
  EXPECT_EQ(items_[0].outcome.breaker, core::BreakerTransition::kClosed);
  EXPECT_FALSE(items_[0].probe);
  EXPECT_FALSE(breaker_.is_open());
}

TEST_F(PublishCompletionTest, AnExpiredUserSigIsRenewedAndTheBodyResentOnce) {
  admission_->Enqueue(1);
  ASSERT_NE(sig_cache_.generated_at(), 0);
  completion_->Complete(0, Outcome(200, ImError(70001)), clock_.SteadyMs());
  EXPECT_FALSE(items_[0].done) << "resent";
  EXPECT_TRUE(items_[0].sig_renewed);
  EXPECT_EQ(sig_cache_.generated_at(), 0) << "the cached sig was dropped";
  EXPECT_EQ(admission_->Next(clock_.SteadyMs()).index, 0u) << "the resend goes first";
  completion_->Complete(0, Outcome(200, ImError(70001)), clock_.SteadyMs());
  EXPECT_TRUE(items_[0].done) << "once only";
  EXPECT_EQ(items_[0].outcome.status, core::PublishStatus::kRetryable);
  EXPECT_EQ(items_[0].outcome.im_error_code, 70001);
}

TEST_F(PublishCompletionTest, NoResendOnceTheDeadlinePassed) {
  clock_.Advance(kTimeout);
  completion_->Complete(0, Outcome(200, ImError(70001)), clock_.SteadyMs());
  EXPECT_TRUE(items_[0].done);
  EXPECT_FALSE(items_[0].sig_renewed);
  EXPECT_EQ(items_[0].outcome.status, core::PublishStatus::kRetryable);
  EXPECT_TRUE(admission_->empty());
}

}  // namespace
}  // namespace room_outbox
