// room_outbox_hook_*, room_outbox_tx_execute and room_outbox_result_* (room_outbox/c.h): the
// hook's commit over the C++ API (CreateHook, Hook::Commit).
#include <new>
#include <string>
#include <utility>

#include "c_api/c_objects.h"
#include "hook_config.h"

using room_outbox::c_api::Guard;
using room_outbox::c_api::StoreError;
using room_outbox::c_api::StoreOk;

namespace {

int32_t LogLevelOf(room_outbox::LogLevel level) {
  switch (level) {
    case room_outbox::LogLevel::kDebug:
      return ROOM_OUTBOX_LOG_DEBUG;
    case room_outbox::LogLevel::kInfo:
      return ROOM_OUTBOX_LOG_INFO;
    case room_outbox::LogLevel::kWarn:
      return ROOM_OUTBOX_LOG_WARN;
    case room_outbox::LogLevel::kError:
      return ROOM_OUTBOX_LOG_ERROR;
  }
  return ROOM_OUTBOX_LOG_ERROR;
}

// `options` as CreateHook takes them from `opts`, with the C log callback.
void HookOptionsOf(const room_outbox_options& opts, room_outbox::HookOptions& options) {
  room_outbox::internal::ToHookOptions(opts.config, options);
  if (opts.log != nullptr) {
    options.log = [log = opts.log, user_data = opts.log_user_data](room_outbox::LogLevel level,
                                                                   std::string_view line) {
      log(user_data, LogLevelOf(level), line.data(), line.size());
    };
  }
}

// What the files behind `opts` expose (room_outbox_options_load_file, a *_file key set), one
// warning line each, before the hook connects.
void LogFileWarnings(const room_outbox_options& opts, const room_outbox::LogCallback& log) {
  if (!log) {
    return;
  }
  for (const std::string& warning : opts.config.warnings) {
    log(room_outbox::LogLevel::kWarn, "configuration warning: " + warning);
  }
}

// The caller's C callback as the C++ API's CallerStatements. A status other than OK rolls back
// with the error of the statement that failed, else with one naming that status.
room_outbox::CallerStatements Statements(room_outbox_statements_fn fn, void* user_data) {
  if (fn == nullptr) {
    return {};
  }
  return [fn, user_data](room_outbox::Transaction& transaction) -> room_outbox::Status {
    room_outbox_tx tx{transaction, std::nullopt};
    const room_outbox_status status = fn(&tx, user_data);
    if (status == ROOM_OUTBOX_OK) {
      return room_outbox::Status();
    }
    if (tx.failure) {
      return *tx.failure;
    }
    return room_outbox::Error{
        room_outbox::c_api::CodeOf(status),
        std::string("caller statements returned ") + room_outbox_status_name(status)};
  };
}

int32_t CommitStatusOf(room_outbox::CommitStatus status) {
  switch (status) {
    case room_outbox::CommitStatus::kCommitted:
      return ROOM_OUTBOX_COMMITTED;
    case room_outbox::CommitStatus::kDuplicate:
      return ROOM_OUTBOX_DUPLICATE;
    case room_outbox::CommitStatus::kFailed:
      return ROOM_OUTBOX_FAILED;
    case room_outbox::CommitStatus::kUnknown:
      return ROOM_OUTBOX_UNKNOWN;
  }
  return ROOM_OUTBOX_FAILED;
}

int32_t DeliveryStateOf(room_outbox::DeliveryState state) {
  switch (state) {
    case room_outbox::DeliveryState::kPublished:
      return ROOM_OUTBOX_PUBLISHED;
    case room_outbox::DeliveryState::kSkipped:
      return ROOM_OUTBOX_SKIPPED;
    case room_outbox::DeliveryState::kPending:
      return ROOM_OUTBOX_PENDING;
    case room_outbox::DeliveryState::kQueued:
      return ROOM_OUTBOX_QUEUED;
  }
  return ROOM_OUTBOX_PENDING;
}

const room_outbox::EventDelivery* EventAt(const room_outbox_result* result, size_t index) {
  if (result == nullptr || index >= result->result.events.size()) {
    return nullptr;
  }
  return &result->result.events[index];
}

const char* Borrowed(const std::string& text, size_t* len) {
  if (len != nullptr) {
    *len = text.size();
  }
  return text.c_str();
}

}  // namespace

extern "C" {

room_outbox_status room_outbox_hook_new(const room_outbox_options* opts, room_outbox_hook** hook,
                                        room_outbox_error** err) {
  constexpr const char* kWhere = "room_outbox_hook_new";
  if (hook != nullptr) {
    *hook = nullptr;
  }
  return Guard(kWhere, err, [&] {
    if (opts == nullptr || hook == nullptr) {
      return StoreError(err, ROOM_OUTBOX_INVALID_ARGUMENT, kWhere, "NULL options or hook");
    }
    auto made = std::make_unique<room_outbox_hook>();
    room_outbox::Error error;
    room_outbox::HookOptions options;
    const room_outbox::internal::WipedOnExit wiped(options);
    HookOptionsOf(*opts, options);
    LogFileWarnings(*opts, options.log);
    made->hook = room_outbox::CreateHook(options, &error);
    if (!made->hook) {
      return StoreError(err, error);
    }
    *hook = made.release();
    return StoreOk(err);
  });
}

void room_outbox_hook_destroy(room_outbox_hook* hook) { delete hook; }

room_outbox_status room_outbox_hook_commit(room_outbox_hook* hook, const room_outbox_command* cmd,
                                           room_outbox_statements_fn statements, void* user_data,
                                           room_outbox_result** result, room_outbox_error** err) {
  constexpr const char* kWhere = "room_outbox_hook_commit";
  if (result != nullptr) {
    *result = nullptr;
  }
  return Guard(kWhere, err, [&] {
    if (hook == nullptr || cmd == nullptr || result == nullptr) {
      return StoreError(err, ROOM_OUTBOX_INVALID_ARGUMENT, kWhere, "NULL hook, command or result");
    }
    auto made = std::make_unique<room_outbox_result>();
    made->result = hook->hook->Commit(cmd->command, cmd->events, Statements(statements, user_data));
    const room_outbox::CommitStatus status = made->result.status;
    if (status == room_outbox::CommitStatus::kFailed ||
        status == room_outbox::CommitStatus::kUnknown) {
      made->error.code = room_outbox::c_api::StatusOf(made->result.error.code);
      made->error.message = made->result.error.message;
      *result = made.release();
      return StoreError(err, (*result)->result.error);
    }
    *result = made.release();
    return StoreOk(err);
  });
}

room_outbox_status room_outbox_tx_execute(room_outbox_tx* tx, const char* sql, size_t sql_len,
                                          const room_outbox_params* params,
                                          room_outbox_error** err) {
  return room_outbox::c_api::ExecuteInTx("room_outbox_tx_execute", tx, sql, sql_len, params,
                                         nullptr, err);
}

void room_outbox_result_destroy(room_outbox_result* result) { delete result; }

int32_t room_outbox_result_status(const room_outbox_result* result) {
  return result == nullptr ? ROOM_OUTBOX_FAILED : CommitStatusOf(result->result.status);
}

const room_outbox_error* room_outbox_result_error(const room_outbox_result* result) {
  const int32_t status = room_outbox_result_status(result);
  if (result == nullptr || (status != ROOM_OUTBOX_FAILED && status != ROOM_OUTBOX_UNKNOWN)) {
    return nullptr;
  }
  return &result->error;
}

size_t room_outbox_result_event_count(const room_outbox_result* result) {
  return result == nullptr ? 0 : result->result.events.size();
}

int32_t room_outbox_result_event_state(const room_outbox_result* result, size_t index) {
  const room_outbox::EventDelivery* event = EventAt(result, index);
  return event == nullptr ? -1 : DeliveryStateOf(event->state);
}

const char* room_outbox_result_event_id(const room_outbox_result* result, size_t index,
                                        size_t* len) {
  const room_outbox::EventDelivery* event = EventAt(result, index);
  return event == nullptr ? nullptr : Borrowed(event->event_id, len);
}

const char* room_outbox_result_event_error(const room_outbox_result* result, size_t index,
                                           size_t* len) {
  const room_outbox::EventDelivery* event = EventAt(result, index);
  return event == nullptr ? nullptr : Borrowed(event->error, len);
}

}  // extern "C"
