// The C ABI's version, statuses, errors and process-wide setup (room_outbox/c.h).
#include <memory>
#include <mutex>
#include <new>
#include <string>

#include "c_api/c_objects.h"

namespace room_outbox::c_api {
namespace {

// c.h: status i (1..10) is ErrorCode i - 1. Append-only on both sides.
constexpr ErrorCode kCodes[] = {
    ErrorCode::kInvalidArgument, ErrorCode::kNotFound,          ErrorCode::kAlreadyExists,
    ErrorCode::kPermissionDenied, ErrorCode::kUnavailable,      ErrorCode::kDeadlineExceeded,
    ErrorCode::kResourceExhausted, ErrorCode::kInternal,        ErrorCode::kCancelled,
    ErrorCode::kAborted};
static_assert(sizeof(kCodes) / sizeof(kCodes[0]) == ROOM_OUTBOX_ABORTED);

}  // namespace

room_outbox_status StatusOf(ErrorCode code) {
  for (room_outbox_status i = 0; i < ROOM_OUTBOX_ABORTED; ++i) {
    if (kCodes[i] == code) {
      return i + 1;
    }
  }
  return ROOM_OUTBOX_INTERNAL;
}

ErrorCode CodeOf(room_outbox_status status) {
  if (status >= ROOM_OUTBOX_INVALID_ARGUMENT && status <= ROOM_OUTBOX_ABORTED) {
    return kCodes[status - 1];
  }
  return ErrorCode::kInternal;  // ROOM_OUTBOX_NO_MEMORY and values this library does not know
}

room_outbox_status StoreError(room_outbox_error** err, room_outbox_status code,
                              std::string_view message) noexcept {
  if (err != nullptr) {
    *err = nullptr;
    try {
      *err = new room_outbox_error{code, std::string(message)};
    } catch (...) {  // out of memory: the status alone tells
    }
  }
  return code;
}

room_outbox_status StoreError(room_outbox_error** err, room_outbox_status code,
                              std::string_view where, std::string_view what) noexcept {
  try {
    return StoreError(err, code, std::string(where) + ": " + std::string(what));
  } catch (...) {
    return StoreError(err, code, what);
  }
}

room_outbox_status StoreError(room_outbox_error** err, const Error& error) noexcept {
  return StoreError(err, StatusOf(error.code), error.message);
}

room_outbox_status StoreOk(room_outbox_error** err) noexcept {
  if (err != nullptr) {
    *err = nullptr;
  }
  return ROOM_OUTBOX_OK;
}

core::Result<std::string_view> Text(const char* p, size_t n, const char* what) {
  if (p == nullptr && n != 0) {
    return core::Fail(ErrorCode::kInvalidArgument, std::string(what) + ": NULL with a length");
  }
  return p == nullptr ? std::string_view() : std::string_view(p, n);
}

core::Result<std::string_view> Name(const char* p, const char* what) {
  if (p == nullptr) {
    return core::Fail(ErrorCode::kInvalidArgument, std::string(what) + ": NULL");
  }
  return std::string_view(p);
}

}  // namespace room_outbox::c_api

using room_outbox::c_api::StoreError;
using room_outbox::c_api::StoreOk;

extern "C" {

int32_t room_outbox_c_version(void) { return ROOM_OUTBOX_C_VERSION; }

const char* room_outbox_status_name(room_outbox_status status) {
  if (status == ROOM_OUTBOX_OK) {
    return "ok";
  }
  if (status == ROOM_OUTBOX_NO_MEMORY) {
    return "no_memory";
  }
  if (status < ROOM_OUTBOX_INVALID_ARGUMENT || status > ROOM_OUTBOX_ABORTED) {
    return "unknown";
  }
  // ErrorCodeName's views are string literals, so NUL-terminated.
  return room_outbox::ErrorCodeName(room_outbox::c_api::CodeOf(status)).data();
}

room_outbox_status room_outbox_error_code(const room_outbox_error* err) {
  return err == nullptr ? ROOM_OUTBOX_INTERNAL : err->code;
}

const char* room_outbox_error_message(const room_outbox_error* err) {
  return err == nullptr ? "" : err->message.c_str();
}

int32_t room_outbox_error_retryable(const room_outbox_error* err) {
  if (err == nullptr) {
    return 0;
  }
  return room_outbox::IsRetryable(room_outbox::Error{room_outbox::c_api::CodeOf(err->code), {}})
             ? 1
             : 0;
}

void room_outbox_error_free(room_outbox_error* err) { delete err; }

}  // extern "C"

namespace {

// The one LibraryInit of a process that sets up through the C ABI.
std::mutex library_mutex;
std::unique_ptr<room_outbox::LibraryInit> library;

}  // namespace

extern "C" {

room_outbox_status room_outbox_library_init(room_outbox_error** err) {
  return room_outbox::c_api::Guard("room_outbox_library_init", err, [&] {
    std::lock_guard<std::mutex> lock(library_mutex);
    if (!library) {
      library = std::make_unique<room_outbox::LibraryInit>();
    }
    if (!library->status().ok()) {
      return StoreError(err, library->status().error());
    }
    return StoreOk(err);
  });
}

void room_outbox_library_cleanup(void) {
  try {
    std::lock_guard<std::mutex> lock(library_mutex);
    library.reset();
  } catch (...) {  // std::system_error from the mutex: nothing to clean up then
  }
}

}  // extern "C"
