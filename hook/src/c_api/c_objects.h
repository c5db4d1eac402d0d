// The objects behind the C ABI's opaque handles (room_outbox/c.h) and the helpers every entry
// point uses: the guard that keeps exceptions on this side, error storing, text arguments.
// Each handle is a thin owner of the C++ API's values: C ABI -> C++ API -> implementation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/config/shared_config.h"
#include "core/result.h"
#include "room_outbox/c.h"
#include "room_outbox/hook.h"

struct room_outbox_error {
  room_outbox_status code = ROOM_OUTBOX_INTERNAL;
  std::string message;
};

// The hook's view of relay.toml, kept as the config (not as HookOptions) so that every later
// room_outbox_options_set goes through the same readers as the file.
struct room_outbox_options {
  room_outbox::core::SharedConfig config;
  room_outbox_log_fn log = nullptr;
  void* log_user_data = nullptr;
};

struct room_outbox_hook {
  std::unique_ptr<room_outbox::Hook> hook;
};

struct room_outbox_command {
  room_outbox::Command command;
  std::vector<room_outbox::Event> events;
};

struct room_outbox_params {
  std::vector<room_outbox::SqlValue> values;
};

// Lives on the stack of one statements callback.
struct room_outbox_tx {
  room_outbox::Transaction& tx;
  // The first failed room_outbox_tx_execute: the commit's error when the callback gives up.
  std::optional<room_outbox::Error> failure;
};

struct room_outbox_result {
  room_outbox::CommitResult result;
  room_outbox_error error;  // a copy of result.error, handed out by room_outbox_result_error
};

namespace room_outbox::c_api {

// The status of an ErrorCode (c.h: 1..10 mirror ErrorCode in its order) and back.
room_outbox_status StatusOf(ErrorCode code);
ErrorCode CodeOf(room_outbox_status status);

// Stores a new room_outbox_error in *err when err is not null; returns `code`. Never throws: when
// even the error cannot be allocated *err gets NULL.
room_outbox_status StoreError(room_outbox_error** err, room_outbox_status code,
                              std::string_view message) noexcept;
// The same with the message "where: what".
room_outbox_status StoreError(room_outbox_error** err, room_outbox_status code,
                              std::string_view where, std::string_view what) noexcept;
room_outbox_status StoreError(room_outbox_error** err, const Error& error) noexcept;
// Clears *err (a call that succeeds stores NULL) and returns ROOM_OUTBOX_OK.
room_outbox_status StoreOk(room_outbox_error** err) noexcept;

// Runs `body` (which returns a room_outbox_status and stores its own errors) so that no
// exception leaves: std::bad_alloc -> ROOM_OUTBOX_NO_MEMORY, anything else -> INTERNAL, with the
// message "where: what".
template <class Body>
room_outbox_status Guard(const char* where, room_outbox_error** err, Body&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return StoreError(err, ROOM_OUTBOX_NO_MEMORY, where, "out of memory");
  } catch (const std::exception& e) {
    return StoreError(err, ROOM_OUTBOX_INTERNAL, where, e.what());
  } catch (...) {
    return StoreError(err, ROOM_OUTBOX_INTERNAL, where, "unexpected failure");
  }
}

// room_outbox_tx_execute and room_outbox_tx_execute_affected (c_tx.cc): runs the statement,
// keeps the first failure in tx->failure, stores the rows matched in *affected_rows when not
// null; `where` names the entry point in errors.
room_outbox_status ExecuteInTx(const char* where, room_outbox_tx* tx, const char* sql,
                               size_t sql_len, const room_outbox_params* params,
                               uint64_t* affected_rows, room_outbox_error** err) noexcept;

// (p, n) as text: NULL with n == 0 is "", NULL with n > 0 is an error naming `what`.
core::Result<std::string_view> Text(const char* p, size_t n, const char* what);
// A NUL-terminated name (key, field); NULL is an error naming `what`.
core::Result<std::string_view> Name(const char* p, const char* what);

}  // namespace room_outbox::c_api
