#include "core/tencent/im_response.h"

#include <optional>
#include <string>

#include "core/tencent/im_answer.h"

namespace room_outbox::core {
namespace {

// The ErrorCode table (see im_response.h). Ranges are inclusive; the first match wins.
struct CodeRow {
  int first;
  int last;
  PublishStatus status;
  FailureScope scope;
  int64_t min_cooldown_ms;
  const char* reason;
};

constexpr PublishStatus kOk = PublishStatus::kPublished;
constexpr PublishStatus kRetry = PublishStatus::kRetryable;
constexpr PublishStatus kRate = PublishStatus::kRateLimited;
constexpr PublishStatus kPerm = PublishStatus::kPermanent;
constexpr FailureScope kRow = FailureScope::kRow;
constexpr FailureScope kRoom = FailureScope::kRoom;
constexpr FailureScope kApp = FailureScope::kApp;
constexpr FailureScope kDead = FailureScope::kUndeliverableRow;
constexpr FailureScope kGlobal = FailureScope::kGlobalRate;

constexpr CodeRow kCodeTable[] = {
    // Room: this group's send frequency; other groups are not affected.
    {10023, 10023, kRate, kRoom, 0, "group send frequency limit"},
    // Global: the app's REST call rate.
    {60007, 60007, kRate, kGlobal, 0, "REST call rate limit"},
    {60011, 60011, kRate, kGlobal, 0, "app request rate limit"},
    {60018, 60019, kRate, kGlobal, 0, "too many requests"},
    {10006, 10006, kRate, kGlobal, 0, "operation rate limit"},
    // Row, transient: IM's internal errors and timeouts; 70001 is renewed and resent.
    {10002, 10002, kRetry, kRow, 0, "IM internal error"},
    {60008, 60008, kRetry, kRow, 0, "IM service timeout"},
    {60014, 60014, kRetry, kRow, 0, "account switch timeout"},
    {70169, 70169, kRetry, kRow, 0, "IM server timeout"},
    {70202, 70202, kRetry, kRow, 0, "IM server timeout"},
    {70500, 70500, kRetry, kRow, 0, "IM server internal error"},
    {80003, 80003, kRetry, kRow, 0, "before-send callback failed"},
    {20004, 20005, kRetry, kRow, 0, "IM network or internal error"},
    {91000, 91000, kRetry, kRow, 0, "IM internal error"},
    {90992, 90992, kRetry, kRow, 0, "IM internal error"},
    {kImErrorUserSigExpired, kImErrorUserSigExpired, kRetry, kRow, 0, "UserSig expired"},
    // Permanent row: this message can never be delivered as it is.
    {80001, 80001, kPerm, kDead, 0, "content refused by moderation"},
    {80002, 80002, kPerm, kDead, 0, "message too long"},
    {80004, 80004, kPerm, kDead, 0, "content refused by moderation"},
    {10004, 10004, kPerm, kDead, 0, "invalid parameter"},
    {10007, 10007, kPerm, kDead, 0, "no permission in group"},
    {10010, 10010, kPerm, kDead, 0, "group not found or dissolved"},
    {10015, 10015, kPerm, kDead, 0, "invalid group id"},
    {10016, 10016, kPerm, kDead, 0, "refused by the app's callback"},
    {10019, 10019, kPerm, kDead, 0, "account not found"},
    // App: nobody can succeed until the configuration or the account changes (§9.4).
    {kImErrorUserSigLockout, kImErrorUserSigLockout, kRetry, kApp, kUserSigLockoutCooldown.count(),
     "UserSig checked too often, locked out"},
    {60004, 60005, kPerm, kApp, 0, "identifier or UserSig wrong"},
    {60006, 60006, kPerm, kApp, 0, "app invalid"},
    {60010, 60010, kPerm, kApp, 0, "needs app admin"},
    {60016, 60016, kPerm, kApp, 0, "app disabled"},
    {60020, 60020, kPerm, kApp, 0, "app package expired"},
    {60021, 60021, kPerm, kApp, 0, "source IP not allowed"},
    {70002, 70020, kPerm, kApp, 0, "UserSig or secret key invalid"},
    {70403, 70403, kPerm, kApp, 0, "needs app admin"},
    {10026, 10026, kPerm, kApp, 0, "command disabled for the app"},
};

}  // namespace

namespace {

bool Listed(int code) {
  for (const CodeRow& row : kCodeTable) {
    if (code >= row.first && code <= row.last) return true;
  }
  return false;
}

}  // namespace

ImVerdict VerdictForImError(int code) {
  for (const CodeRow& row : kCodeTable) {
    if (code >= row.first && code <= row.last) {
      return ImVerdict{row.status, row.scope, std::chrono::milliseconds(row.min_cooldown_ms),
                       row.reason};
    }
  }
  // Not in the table: neither known to be terminal nor to concern more than this row. Retried at
  // the fixed interval like any row failure and never parked, so its class word says so.
  return ImVerdict{kRetry, kRow, {}, ""};
}

ImVerdict VerdictForHttpStatus(int http_status) {
  if (http_status == 429) {
    return ImVerdict{kRate, kGlobal, {}, "too many requests"};
  }
  if (http_status >= 500 || http_status == 408) {
    return ImVerdict{kRetry, kRow, {}, ""};
  }
  if (http_status == 200) {
    return ImVerdict{kOk, FailureScope::kNone, {}, ""};
  }
  // Any other status: not IM's API answering (wrong endpoint, a proxy refusing); no request of
  // this process can succeed until that changes.
  return ImVerdict{kPerm, kApp, {}, "not an IM API answer"};
}

namespace {

// A 200 answer carrying a non-zero ErrorCode: the table decides.
void ApplyErrorCode(const ImAnswer& answer, PublishOutcome& out) {
  const ImVerdict verdict = VerdictForImError(answer.code);
  out.status = verdict.status;
  out.scope = verdict.scope;
  out.min_cooldown = verdict.min_cooldown;
  out.error = "im error " + std::to_string(answer.code);
  if (!Listed(answer.code)) {
    out.error += " (unlisted code)";
  }
  if (!answer.info.empty()) {
    out.error += ": " + answer.info;
  } else if (verdict.reason[0] != '\0') {
    out.error += std::string(": ") + verdict.reason;
  }
}

}  // namespace

PublishOutcome ClassifyImResponse(int http_status, std::string_view body) {
  PublishOutcome out;
  out.http_status = http_status;
  if (http_status != 200) {
    ImVerdict verdict = VerdictForHttpStatus(http_status);
    out.status = verdict.status;
    out.scope = verdict.scope;
    out.error = "http " + std::to_string(http_status) + " from IM";
    return out;
  }
  std::string why;
  const std::optional<ImAnswer> answer = ReadImAnswer(body, why);
  if (!answer) {
    out.status = PublishStatus::kRetryable;
    out.error = std::move(why);
    return out;
  }
  out.im_error_code = answer->code;
  if (answer->code != 0) {
    ApplyErrorCode(*answer, out);
    return out;
  }
  if (answer->action != "OK") {
    // FAIL (or nothing) without an error code: a malformed answer, not a verdict on the event.
    out.status = PublishStatus::kRetryable;
    out.error = answer->has_code
                    ? "invalid IM response (ActionStatus " + ShortText(answer->action) + ")"
                    : "invalid IM response (no ErrorCode)";
    return out;
  }
  if (!answer->drop_reason.empty()) {
    // IM answers success but did not deliver (per-group frequency control, the only reason IM
    // documents): this room's group is over its cap; other rooms are not affected.
    out.status = PublishStatus::kRateLimited;
    out.scope = FailureScope::kRoom;
    out.definite_drop = true;
    out.error = "dropped by IM: " + ShortText(answer->drop_reason);
    return out;
  }
  out.status = PublishStatus::kPublished;
  out.scope = FailureScope::kNone;
  return out;
}

const char* FailureScopeName(FailureScope scope) {
  switch (scope) {
    case FailureScope::kNone:
      return "none";
    case FailureScope::kRow:
      return "row";
    case FailureScope::kRoom:
      return "room";
    case FailureScope::kApp:
      return "app";
    case FailureScope::kUndeliverableRow:
      return "undeliverable_row";
    case FailureScope::kGlobalRate:
      return "global_rate";
  }
  return "row";
}

}  // namespace room_outbox::core
