// The functions the public vocabulary headers declare (room_outbox/error.h, room_outbox/options.h):
// the error, option and setting types both sides hold. They live in core because the relay holds
// these types too and links no hook; the installed hook exports them.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "room_outbox/error.h"
#include "room_outbox/options.h"

namespace room_outbox {

std::string_view ErrorCodeName(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument:
      return "invalid_argument";
    case ErrorCode::kNotFound:
      return "not_found";
    case ErrorCode::kAlreadyExists:
      return "already_exists";
    case ErrorCode::kPermissionDenied:
      return "permission_denied";
    case ErrorCode::kUnavailable:
      return "unavailable";
    case ErrorCode::kDeadlineExceeded:
      return "deadline_exceeded";
    case ErrorCode::kResourceExhausted:
      return "resource_exhausted";
    case ErrorCode::kInternal:
      return "internal";
    case ErrorCode::kCancelled:
      return "cancelled";
    case ErrorCode::kAborted:
      return "aborted";
  }
  return "unknown";
}

bool IsRetryable(const Error& error) {
  return error.code == ErrorCode::kUnavailable || error.code == ErrorCode::kDeadlineExceeded ||
         error.code == ErrorCode::kResourceExhausted || error.code == ErrorCode::kAborted;
}

std::vector<std::string> DefaultSkipEventTypes() {
  return {"RoomCreated", "RoomHeatChanged", "RoomRankChanged"};
}

const char* SqlDialectName(SqlDialect dialect) {
  switch (dialect) {
    case SqlDialect::kAuto:
      return "auto";
    case SqlDialect::kMariaDb:
      return "mariadb";
    case SqlDialect::kMySql:
      return "mysql";
  }
  return "auto";
}

std::optional<SqlDialect> ParseSqlDialect(std::string_view name) {
  for (SqlDialect dialect : {SqlDialect::kAuto, SqlDialect::kMariaDb, SqlDialect::kMySql}) {
    if (name == SqlDialectName(dialect)) {
      return dialect;
    }
  }
  return std::nullopt;
}

const char* SslModeName(SslMode mode) {
  switch (mode) {
    case SslMode::kDisabled:
      return "disabled";
    case SslMode::kPreferred:
      return "preferred";
    case SslMode::kRequired:
      return "required";
    case SslMode::kVerifyCa:
      return "verify_ca";
    case SslMode::kVerifyIdentity:
      return "verify_identity";
  }
  return "preferred";
}

std::optional<SslMode> ParseSslMode(std::string_view name) {
  for (SslMode mode : {SslMode::kDisabled, SslMode::kPreferred, SslMode::kRequired,
                       SslMode::kVerifyCa, SslMode::kVerifyIdentity}) {
    if (name == SslModeName(mode)) {
      return mode;
    }
  }
  return std::nullopt;
}

const char* MsgPriorityName(MsgPriority priority) {
  switch (priority) {
    case MsgPriority::kHigh:
      return "High";
    case MsgPriority::kNormal:
      return "Normal";
    case MsgPriority::kLow:
      return "Low";
  }
  return "High";
}

std::optional<MsgPriority> ParseMsgPriority(std::string_view name) {
  for (MsgPriority p : {MsgPriority::kHigh, MsgPriority::kNormal, MsgPriority::kLow}) {
    if (name == MsgPriorityName(p)) {
      return p;
    }
  }
  return std::nullopt;
}

const char* SyncPublishModeName(SyncPublishMode mode) {
  switch (mode) {
    case SyncPublishMode::kInline:
      return "inline";
    case SyncPublishMode::kBackground:
      return "background";
    case SyncPublishMode::kOff:
      return "off";
  }
  return "inline";
}

std::optional<SyncPublishMode> ParseSyncPublishMode(std::string_view name) {
  for (SyncPublishMode mode :
       {SyncPublishMode::kInline, SyncPublishMode::kBackground, SyncPublishMode::kOff}) {
    if (name == SyncPublishModeName(mode)) {
      return mode;
    }
  }
  return std::nullopt;
}

}  // namespace room_outbox
