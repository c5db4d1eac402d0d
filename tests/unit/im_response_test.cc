#include "core/tencent/im_response.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace room_outbox {
namespace {

struct Case {
  const char* name;
  int http_status;
  std::string body;
  core::PublishStatus status;
  int im_error_code;
  const char* error;  // exact expected error text ("" for none)
};

std::string ImError(int code, const std::string& info) {
  return R"({"ActionStatus":"FAIL","ErrorInfo":")" + info + R"(","ErrorCode":)" +
         std::to_string(code) + "}";
}

TEST(ImResponseTest, ClassifiesByHttpStatusAndErrorCode) {
  const Case cases[] = {
      {"ok", 200, R"({"ActionStatus":"OK","ErrorInfo":"","ErrorCode":0,"MsgTime":1,"MsgSeq":2})",
       core::PublishStatus::kPublished, 0, ""},
      {"ok without ErrorInfo", 200, R"({"ActionStatus":"OK","ErrorCode":0})",
       core::PublishStatus::kPublished, 0, ""},
      {"ok with empty drop reason", 200,
       R"({"ActionStatus":"OK","ErrorCode":0,"MsgDropReason":""})", core::PublishStatus::kPublished,
       0, ""},
      {"ok but dropped by frequency control", 200,
       R"({"ActionStatus":"OK","ErrorCode":0,"MsgDropReason":"MsgFreqCtrl"})",
       core::PublishStatus::kRateLimited, 0, "dropped by IM: MsgFreqCtrl"},
      {"internal error", 200, ImError(10002, "internal error"), core::PublishStatus::kRetryable,
       10002, "im error 10002: internal error"},
      {"service timeout", 200, ImError(60008, "timeout"), core::PublishStatus::kRetryable, 60008,
       "im error 60008: timeout"},
      {"server timeout", 200, ImError(70169, "t"), core::PublishStatus::kRetryable, 70169,
       "im error 70169: t"},
      {"server internal", 200, ImError(70500, "e"), core::PublishStatus::kRetryable, 70500,
       "im error 70500: e"},
      {"callback failed", 200, ImError(80003, "cb"), core::PublishStatus::kRetryable, 80003,
       "im error 80003: cb"},
      {"usersig expired", 200, ImError(70001, "expired"), core::PublishStatus::kRetryable, 70001,
       "im error 70001: expired"},
      {"rest rate", 200, ImError(60007, "rate"), core::PublishStatus::kRateLimited, 60007,
       "im error 60007: rate"},
      {"app rate", 200, ImError(60011, "rate"), core::PublishStatus::kRateLimited, 60011,
       "im error 60011: rate"},
      {"too many 18", 200, ImError(60018, "x"), core::PublishStatus::kRateLimited, 60018,
       "im error 60018: x"},
      {"too many 19", 200, ImError(60019, "x"), core::PublishStatus::kRateLimited, 60019,
       "im error 60019: x"},
      {"operation frequency", 200, ImError(10006, "x"), core::PublishStatus::kRateLimited, 10006,
       "im error 10006: x"},
      {"send frequency", 200, ImError(10023, "x"), core::PublishStatus::kRateLimited, 10023,
       "im error 10023: x"},
      {"group not found", 200, ImError(10010, "group not found"), core::PublishStatus::kPermanent,
       10010, "im error 10010: group not found"},
      {"bad group id", 200, ImError(10015, "bad"), core::PublishStatus::kPermanent, 10015,
       "im error 10015: bad"},
      {"bad parameter", 200, ImError(10004, "bad"), core::PublishStatus::kPermanent, 10004,
       "im error 10004: bad"},
      {"bad usersig", 200, ImError(70003, "sig"), core::PublishStatus::kPermanent, 70003,
       "im error 70003: sig"},
      {"wrong key", 200, ImError(70009, "sig"), core::PublishStatus::kPermanent, 70009,
       "im error 70009: sig"},
      {"bad account", 200, ImError(60004, "acct"), core::PublishStatus::kPermanent, 60004,
       "im error 60004: acct"},
      {"error code without info", 200, R"({"ActionStatus":"FAIL","ErrorCode":10010})",
       core::PublishStatus::kPermanent, 10010, "im error 10010: group not found or dissolved"},
      {"unlisted code without info", 200, R"({"ActionStatus":"FAIL","ErrorCode":12345})",
       core::PublishStatus::kRetryable, 12345, "im error 12345 (unlisted code)"},
      {"unlisted code with info", 200, ImError(12346, "new thing"), core::PublishStatus::kRetryable,
       12346, "im error 12346 (unlisted code): new thing"},
      {"FAIL without code", 200, R"({"ActionStatus":"FAIL","ErrorCode":0})",
       core::PublishStatus::kRetryable, 0, "invalid IM response (ActionStatus FAIL)"},
      {"no fields", 200, "{}", core::PublishStatus::kRetryable, 0,
       "invalid IM response (no ErrorCode)"},
      {"not json", 200, "<html>oops</html>", core::PublishStatus::kRetryable, 0,
       "invalid IM response (not JSON)"},
      {"json array", 200, "[1]", core::PublishStatus::kRetryable, 0,
       "invalid IM response (not JSON)"},
      {"empty body", 200, "", core::PublishStatus::kRetryable, 0, "invalid IM response (not JSON)"},
      {"bad gateway", 502, "<html>bad gateway</html>", core::PublishStatus::kRetryable, 0,
       "http 502 from IM"},
      {"unavailable", 503, "", core::PublishStatus::kRetryable, 0, "http 503 from IM"},
      {"request timeout", 408, "", core::PublishStatus::kRetryable, 0, "http 408 from IM"},
      {"too many requests", 429, "", core::PublishStatus::kRateLimited, 0, "http 429 from IM"},
      {"forbidden", 403, "", core::PublishStatus::kPermanent, 0, "http 403 from IM"},
      {"not found", 404, ImError(0, ""), core::PublishStatus::kPermanent, 0, "http 404 from IM"},
  };
  for (const auto& c : cases) {
    core::PublishOutcome out = core::ClassifyImResponse(c.http_status, c.body);
    EXPECT_EQ(out.status, c.status) << c.name << ": got " << core::PublishStatusName(out.status);
    EXPECT_EQ(out.im_error_code, c.im_error_code) << c.name;
    EXPECT_EQ(out.http_status, c.http_status) << c.name;
    EXPECT_EQ(out.error, c.error) << c.name;
    EXPECT_EQ(out.delivered(), c.status == core::PublishStatus::kPublished) << c.name;
  }
}

TEST(ImResponseTest, ErrorInfoIsTruncatedAtCharacterBoundary) {
  std::string info;
  for (int i = 0; i < 100; ++i) {
    info += "群";  // 3 bytes each: 300 bytes
  }
  core::PublishOutcome out = core::ClassifyImResponse(200, ImError(10010, info));
  ASSERT_EQ(out.status, core::PublishStatus::kPermanent);
  const std::string prefix = "im error 10010: ";
  ASSERT_EQ(out.error.compare(0, prefix.size(), prefix), 0) << out.error;
  std::string kept = out.error.substr(prefix.size());
  EXPECT_EQ(kept.size(), 120u);  // 40 whole characters
  EXPECT_EQ(kept, info.substr(0, 120));
}

TEST(ImResponseTest, ErrorTextNeverHoldsTheWholeBody) {
  std::string long_info(5000, 'x');
  std::string body = ImError(10002, "first\\nsecond " + long_info);
  core::PublishOutcome out = core::ClassifyImResponse(200, body);
  EXPECT_LT(out.error.size(), 160u);
  EXPECT_EQ(out.error.find('\n'), std::string::npos);
  core::PublishOutcome http = core::ClassifyImResponse(500, body);
  EXPECT_EQ(http.error, "http 500 from IM");
}

// Every code of the failure-scope table (im_response.h), one by one, through a real answer.
TEST(ImResponseTest, EveryCodeHasItsStatusAndScope) {
  struct CodeCase {
    int code;
    core::PublishStatus status;
    core::FailureScope scope;
    int64_t min_cooldown_ms;
  };
  using S = core::PublishStatus;
  using F = core::FailureScope;
  std::vector<CodeCase> cases = {
      // row: transient
      {10002, S::kRetryable, F::kRow, 0},
      {60008, S::kRetryable, F::kRow, 0},
      {60014, S::kRetryable, F::kRow, 0},
      {70169, S::kRetryable, F::kRow, 0},
      {70202, S::kRetryable, F::kRow, 0},
      {70500, S::kRetryable, F::kRow, 0},
      {80003, S::kRetryable, F::kRow, 0},
      {20004, S::kRetryable, F::kRow, 0},
      {20005, S::kRetryable, F::kRow, 0},
      {91000, S::kRetryable, F::kRow, 0},
      {90992, S::kRetryable, F::kRow, 0},
      {70001, S::kRetryable, F::kRow, 0},
      // room
      {10023, S::kRateLimited, F::kRoom, 0},
      // global rate
      {60007, S::kRateLimited, F::kGlobalRate, 0},
      {60011, S::kRateLimited, F::kGlobalRate, 0},
      {60018, S::kRateLimited, F::kGlobalRate, 0},
      {60019, S::kRateLimited, F::kGlobalRate, 0},
      {10006, S::kRateLimited, F::kGlobalRate, 0},
      // undeliverable row
      {80001, S::kPermanent, F::kUndeliverableRow, 0},
      {80002, S::kPermanent, F::kUndeliverableRow, 0},
      {80004, S::kPermanent, F::kUndeliverableRow, 0},
      {10004, S::kPermanent, F::kUndeliverableRow, 0},
      {10007, S::kPermanent, F::kUndeliverableRow, 0},
      {10010, S::kPermanent, F::kUndeliverableRow, 0},
      {10015, S::kPermanent, F::kUndeliverableRow, 0},
      {10016, S::kPermanent, F::kUndeliverableRow, 0},
      {10019, S::kPermanent, F::kUndeliverableRow, 0},
      // app
      {60004, S::kPermanent, F::kApp, 0},
      {60005, S::kPermanent, F::kApp, 0},
      {60006, S::kPermanent, F::kApp, 0},
      {60010, S::kPermanent, F::kApp, 0},
      {60016, S::kPermanent, F::kApp, 0},
      {60020, S::kPermanent, F::kApp, 0},
      {60021, S::kPermanent, F::kApp, 0},
      {70403, S::kPermanent, F::kApp, 0},
      {10026, S::kPermanent, F::kApp, 0},
      {70050, S::kRetryable, F::kApp, 60000},
      // not in the table: retried as a row, never parked, and called retryable
      {60002, S::kRetryable, F::kRow, 0},
      {10003, S::kRetryable, F::kRow, 0},
      {10017, S::kRetryable, F::kRow, 0},
      {99999, S::kRetryable, F::kRow, 0},
  };
  for (int code = 70002; code <= 70020; ++code) {  // the signature family
    cases.push_back({code, S::kPermanent, F::kApp, 0});
  }
  for (const CodeCase& c : cases) {
    core::PublishOutcome out = core::ClassifyImResponse(200, ImError(c.code, ""));
    EXPECT_EQ(out.status, c.status) << c.code << ": got " << core::PublishStatusName(out.status);
    EXPECT_EQ(out.scope, c.scope) << c.code << ": got " << core::FailureScopeName(out.scope);
    EXPECT_EQ(out.min_cooldown.count(), c.min_cooldown_ms) << c.code;
    EXPECT_EQ(out.im_error_code, c.code);
    EXPECT_FALSE(out.definite_drop) << c.code;
    EXPECT_FALSE(out.delivered()) << c.code;
    core::ImVerdict verdict = core::VerdictForImError(c.code);
    EXPECT_EQ(verdict.status, c.status) << c.code;
    EXPECT_EQ(verdict.scope, c.scope) << c.code;
  }
}

TEST(ImResponseTest, DropReasonIsARoomScopedDefiniteDrop) {
  core::PublishOutcome out = core::ClassifyImResponse(
      200, R"({"ActionStatus":"OK","ErrorCode":0,"MsgDropReason":"MsgFreqCtrl"})");
  EXPECT_EQ(out.status, core::PublishStatus::kRateLimited) << "not delivered";
  EXPECT_EQ(out.scope, core::FailureScope::kRoom);
  EXPECT_TRUE(out.definite_drop);
  EXPECT_FALSE(out.delivered());

  core::PublishOutcome ok = core::ClassifyImResponse(200, R"({"ActionStatus":"OK","ErrorCode":0})");
  EXPECT_EQ(ok.scope, core::FailureScope::kNone);
  EXPECT_FALSE(ok.definite_drop);
}

// The answer's fields are its top-level ones, each at its last value, as a parsed document
// keeps them; nested fields of the same names count for nothing.
TEST(ImResponseTest, OnlyTopLevelFieldsAtTheirLastValueDecide) {
  struct Shape {
    std::string body;
    core::PublishStatus status;
    int im_error_code;
  };
  const std::vector<Shape> shapes = {
      {R"({"ErrorCode":10002,"ActionStatus":"OK","ErrorCode":0})", core::PublishStatus::kPublished,
       0},
      {R"({"ActionStatus":"OK","ErrorCode":0,"ErrorCode":10002})", core::PublishStatus::kRetryable,
       10002},
      {R"({"ActionStatus":"OK","ActionStatus":"FAIL","ErrorCode":0})",
       core::PublishStatus::kRetryable, 0},
      {R"({"ActionStatus":"OK","ErrorCode":0,"x":{"ErrorCode":10002,"a":[{"ErrorCode":1}]}})",
       core::PublishStatus::kPublished, 0},
      // ActionStatus OK with no integer ErrorCode is a success, whatever else ErrorCode holds.
      {R"({"ActionStatus":"OK","ErrorCode":{"ErrorCode":10002}})", core::PublishStatus::kPublished,
       0},
      {R"({"ActionStatus":"OK","ErrorCode":1.5})", core::PublishStatus::kPublished, 0},
      {R"({"ActionStatus":"OK","ErrorCode":4294967296,"ErrorCode":0})",
       core::PublishStatus::kPublished, 0},
      {R"({"ActionStatus":"OK","ErrorCode":0,"ErrorCode":4294967296})",
       core::PublishStatus::kRetryable, 0},
      {R"([{"ActionStatus":"OK","ErrorCode":0}])", core::PublishStatus::kRetryable, 0},
      {R"("OK")", core::PublishStatus::kRetryable, 0},
      {R"({"ActionStatus":"OK","ErrorCode":0} {})", core::PublishStatus::kRetryable, 0},
      {R"({"ActionStatus":"OK","ErrorCode":0)", core::PublishStatus::kRetryable, 0},
  };
  for (const Shape& shape : shapes) {
    const core::PublishOutcome out = core::ClassifyImResponse(200, shape.body);
    EXPECT_EQ(out.status, shape.status) << shape.body << ": " << out.error;
    EXPECT_EQ(out.im_error_code, shape.im_error_code) << shape.body;
  }
}

TEST(ImResponseTest, HttpStatusesHaveTheirScopes) {
  struct HttpCase {
    int http_status;
    core::PublishStatus status;
    core::FailureScope scope;
  };
  const HttpCase cases[] = {
      {500, core::PublishStatus::kRetryable, core::FailureScope::kRow},
      {502, core::PublishStatus::kRetryable, core::FailureScope::kRow},
      {503, core::PublishStatus::kRetryable, core::FailureScope::kRow},
      {504, core::PublishStatus::kRetryable, core::FailureScope::kRow},
      {408, core::PublishStatus::kRetryable, core::FailureScope::kRow},
      {429, core::PublishStatus::kRateLimited, core::FailureScope::kGlobalRate},
      {400, core::PublishStatus::kPermanent, core::FailureScope::kApp},
      {403, core::PublishStatus::kPermanent, core::FailureScope::kApp},
      {404, core::PublishStatus::kPermanent, core::FailureScope::kApp},
  };
  for (const HttpCase& c : cases) {
    core::PublishOutcome out = core::ClassifyImResponse(c.http_status, "");
    EXPECT_EQ(out.status, c.status) << c.http_status;
    EXPECT_EQ(out.scope, c.scope) << c.http_status << ": got " << core::FailureScopeName(out.scope);
  }
  // 200 without IM's JSON: some proxy answered; the row is tried again.
  EXPECT_EQ(core::ClassifyImResponse(200, "<html></html>").scope, core::FailureScope::kRow);
}

TEST(ImResponseTest, ScopeNames) {
  EXPECT_STREQ(core::FailureScopeName(core::FailureScope::kNone), "none");
  EXPECT_STREQ(core::FailureScopeName(core::FailureScope::kRow), "row");
  EXPECT_STREQ(core::FailureScopeName(core::FailureScope::kRoom), "room");
  EXPECT_STREQ(core::FailureScopeName(core::FailureScope::kApp), "app");
  EXPECT_STREQ(core::FailureScopeName(core::FailureScope::kUndeliverableRow), "undeliverable_row");
  EXPECT_STREQ(core::FailureScopeName(core::FailureScope::kGlobalRate), "global_rate");
  EXPECT_STREQ(core::PublishStatusName(core::PublishStatus::kNotAttempted), "not_attempted");
}

}  // namespace
}  // namespace room_outbox
