// room_outbox_command_* and room_outbox_params_* (room_outbox/c.h): a command, its events and the
// parameters of the caller's statements, as values of the C++ API.
#include <new>
#include <string>

#include "c_api/c_objects.h"

using room_outbox::c_api::Guard;
using room_outbox::c_api::StoreError;
using room_outbox::c_api::StoreOk;

namespace {

room_outbox_status NoSuchField(room_outbox_error** err, const char* what, std::string_view field) {
  return StoreError(err, ROOM_OUTBOX_INVALID_ARGUMENT,
                    std::string(what) + ": unknown field \"" + std::string(field) + "\"");
}

// The text field of a command named `field`, or null.
std::string* CommandText(room_outbox::Command& c, std::string_view field) {
  if (field == "command_id") return &c.command_id;
  if (field == "room_id") return &c.room_id;
  if (field == "command_type") return &c.command_type;
  if (field == "request_id") return &c.request_id;
  if (field == "payload") return &c.payload;
  return nullptr;
}

// The integer field of an event named `field`, or null.
int64_t* EventInt(room_outbox::Event& e, std::string_view field) {
  if (field == "room_seq") return &e.room_seq;
  if (field == "occurred_at_ms") return &e.occurred_at_ms;
  return nullptr;
}

template <class Value>
room_outbox_status AddParam(room_outbox_params* params, Value&& value) noexcept {
  if (params == nullptr) {
    return ROOM_OUTBOX_INVALID_ARGUMENT;
  }
  try {
    params->values.emplace_back(std::forward<Value>(value));
    return ROOM_OUTBOX_OK;
  } catch (...) {  // std::bad_alloc
    return ROOM_OUTBOX_NO_MEMORY;
  }
}

}  // namespace

extern "C" {

room_outbox_command* room_outbox_command_new(void) {
  return new (std::nothrow) room_outbox_command();
}

void room_outbox_command_destroy(room_outbox_command* cmd) { delete cmd; }

room_outbox_status room_outbox_command_set_text(room_outbox_command* cmd, const char* field,
                                                const char* value, size_t value_len,
                                                room_outbox_error** err) {
  constexpr const char* kWhere = "room_outbox_command_set_text";
  return Guard(kWhere, err, [&] {
    auto name = room_outbox::c_api::Name(field, "room_outbox_command_set_text: field");
    auto text = room_outbox::c_api::Text(value, value_len, "room_outbox_command_set_text: value");
    if (cmd == nullptr || !name || !text) {
      return cmd == nullptr ? StoreError(err, ROOM_OUTBOX_INVALID_ARGUMENT, kWhere, "NULL command")
                            : StoreError(err, !name ? name.error() : text.error());
    }
    std::string* target = CommandText(cmd->command, *name);
    if (target == nullptr) {
      return NoSuchField(err, kWhere, *name);
    }
    target->assign(*text);
    return StoreOk(err);
  });
}

room_outbox_status room_outbox_command_set_int(room_outbox_command* cmd, const char* field,
                                               int64_t value, room_outbox_error** err) {
  constexpr const char* kWhere = "room_outbox_command_set_int";
  return Guard(kWhere, err, [&] {
    auto name = room_outbox::c_api::Name(field, "room_outbox_command_set_int: field");
    if (cmd == nullptr || !name) {
      return cmd == nullptr ? StoreError(err, ROOM_OUTBOX_INVALID_ARGUMENT, kWhere, "NULL command")
                            : StoreError(err, name.error());
    }
    if (*name != "room_seq") {
      return NoSuchField(err, kWhere, *name);
    }
    cmd->command.room_seq = value;
    return StoreOk(err);
  });
}

room_outbox_status room_outbox_command_add_event(room_outbox_command* cmd, const char* event_id,
                                                 size_t event_id_len, const char* event_type,
                                                 size_t event_type_len, int64_t room_seq,
                                                 const char* payload, size_t payload_len,
                                                 room_outbox_error** err) {
  constexpr const char* kWhere = "room_outbox_command_add_event";
  return Guard(kWhere, err, [&] {
    if (cmd == nullptr) {
      return StoreError(err, ROOM_OUTBOX_INVALID_ARGUMENT, kWhere, "NULL command");
    }
    auto id = room_outbox::c_api::Text(event_id, event_id_len, "room_outbox_command_add_event: event_id");
    auto type = room_outbox::c_api::Text(event_type, event_type_len,
                                         "room_outbox_command_add_event: event_type");
    auto body = room_outbox::c_api::Text(payload, payload_len, "room_outbox_command_add_event: payload");
    if (!id || !type || !body) {
      return StoreError(err, !id ? id.error() : !type ? type.error() : body.error());
    }
    room_outbox::Event event;
    event.event_id.assign(*id);
    event.event_type.assign(*type);
    event.room_seq = room_seq;
    event.payload.assign(*body);
    cmd->events.push_back(std::move(event));
    return StoreOk(err);
  });
}

room_outbox_status room_outbox_command_set_event_int(room_outbox_command* cmd, size_t index,
                                                     const char* field, int64_t value,
                                                     room_outbox_error** err) {
  constexpr const char* kWhere = "room_outbox_command_set_event_int";
  return Guard(kWhere, err, [&] {
    auto name = room_outbox::c_api::Name(field, "room_outbox_command_set_event_int: field");
    if (cmd == nullptr || !name) {
      return cmd == nullptr ? StoreError(err, ROOM_OUTBOX_INVALID_ARGUMENT, kWhere, "NULL command")
                            : StoreError(err, name.error());
    }
    if (index >= cmd->events.size()) {
      return StoreError(err, ROOM_OUTBOX_INVALID_ARGUMENT, kWhere,
                        "no event " + std::to_string(index) + " (the command has " +
                            std::to_string(cmd->events.size()) + ")");
    }
    int64_t* target = EventInt(cmd->events[index], *name);
    if (target == nullptr) {
      return NoSuchField(err, kWhere, *name);
    }
    *target = value;
    return StoreOk(err);
  });
}

room_outbox_params* room_outbox_params_new(void) { return new (std::nothrow) room_outbox_params(); }

void room_outbox_params_destroy(room_outbox_params* params) { delete params; }

void room_outbox_params_clear(room_outbox_params* params) {
  if (params != nullptr) {
    params->values.clear();
  }
}

room_outbox_status room_outbox_params_add_null(room_outbox_params* params) {
  return AddParam(params, std::monostate{});
}

room_outbox_status room_outbox_params_add_int(room_outbox_params* params, int64_t value) {
  return AddParam(params, value);
}

room_outbox_status room_outbox_params_add_double(room_outbox_params* params, double value) {
  return AddParam(params, value);
}

room_outbox_status room_outbox_params_add_text(room_outbox_params* params, const char* value,
                                               size_t value_len) {
  if (value == nullptr && value_len != 0) {
    return ROOM_OUTBOX_INVALID_ARGUMENT;
  }
  try {
    return AddParam(params, std::string(value == nullptr ? "" : value, value_len));
  } catch (...) {  // std::bad_alloc
    return ROOM_OUTBOX_NO_MEMORY;
  }
}

}  // extern "C"
