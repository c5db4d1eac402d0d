// Error values of the room-outbox hook API. Nothing in the hook throws across its API: every
// failure is returned as an Error (or a Status holding one).
#pragma once

#include <string>
#include <string_view>
#include <utility>

#include "room_outbox/export.h"

namespace room_outbox {

// A small closed set of error kinds. Each carries one decision: retry or not.
enum class ErrorCode {
  kInvalidArgument,    // bad input: config, envelope, SQL parameters. Not retryable.
  kNotFound,           // the thing asked for is not there. Not retryable.
  kAlreadyExists,      // e.g. a duplicate command_id. Not retryable.
  kPermissionDenied,   // credentials or rights refused. Not retryable.
  kUnavailable,        // server gone, connection refused or reset. Retryable.
  kDeadlineExceeded,   // a bounded call ran out of time; its outcome is unknown. Retryable.
  kResourceExhausted,  // a rate or frequency limit answered. Retryable after a pause.
  kInternal,           // a bug or an unexpected answer. Not retryable.
  kCancelled,          // the caller asked to stop. Not retryable.
  kAborted,            // a transaction lost a lock conflict (deadlock); rerun it. Retryable.
};

// The name of `code` as written in logs, e.g. "unavailable".
ROOM_OUTBOX_EXPORT std::string_view ErrorCodeName(ErrorCode code);

struct [[nodiscard]] Error {
  ErrorCode code = ErrorCode::kInternal;
  // What failed and why, e.g. "mysql_stmt_execute(claim_due): Lock wait timeout exceeded".
  // Never holds a secret (password, secret key, UserSig).
  std::string message;
};

// True for the kinds worth another try: kUnavailable, kDeadlineExceeded, kResourceExhausted,
// kAborted.
ROOM_OUTBOX_EXPORT bool IsRetryable(const Error& error);

// Either OK or one Error.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Error error) : ok_(false), error_(std::move(error)) {}  // NOLINT: implicit by design
  bool ok() const { return ok_; }
  // Only meaningful when !ok().
  const Error& error() const { return error_; }

 private:
  bool ok_ = true;
  Error error_;
};

}  // namespace room_outbox
