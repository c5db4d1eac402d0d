// ReadImAnswer: the fields of IM's 200 answer that decide a publish's outcome, read from the
// parser's events (the answer is not built as a document).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace room_outbox::core {

// The fields of a 200 answer that decide.
struct ImAnswer {
  std::string action;  // ActionStatus
  int code = 0;        // ErrorCode
  bool has_code = false;
  std::string info;         // ErrorInfo, shortened
  std::string drop_reason;  // MsgDropReason (non-empty when present)
};

// Reads the answer's top-level fields (a field named twice counts at its last value, as a parsed
// document keeps it); nullopt with `why` when the body is not IM's JSON object or its ErrorCode
// does not fit an int.
std::optional<ImAnswer> ReadImAnswer(std::string_view body, std::string& why);

// `text` cut at a UTF-8 character boundary to at most 120 bytes, control characters replaced by
// spaces: IM's texts as last_error and log fields hold them.
std::string ShortText(std::string_view text);

}  // namespace room_outbox::core
