// room_outbox_options_* (room_outbox/c.h): the hook's options as relay.toml names them.
#include <new>
#include <string>
#include <utility>

#include "c_api/c_objects.h"
#include "c_api/option_setter.h"
#include "hook_config.h"

using room_outbox::c_api::Guard;
using room_outbox::c_api::StoreError;
using room_outbox::c_api::StoreOk;

extern "C" {

room_outbox_options* room_outbox_options_new(void) {
  try {
    auto opts = std::make_unique<room_outbox_options>();
    // What an empty relay.toml gives: the defaults, and the secrets from the environment.
    if (auto loaded = room_outbox::core::LoadSharedSecretsAndDefaults(opts->config); !loaded) {
      return nullptr;
    }
    return opts.release();
  } catch (...) {  // std::bad_alloc
    return nullptr;
  }
}

void room_outbox_options_destroy(room_outbox_options* opts) { delete opts; }

room_outbox_status room_outbox_options_load_file(room_outbox_options* opts, const char* path,
                                                 size_t path_len, room_outbox_error** err) {
  return Guard("room_outbox_options_load_file", err, [&] {
    if (opts == nullptr) {
      return StoreError(err, ROOM_OUTBOX_INVALID_ARGUMENT, "room_outbox_options_load_file: NULL options");
    }
    auto text = room_outbox::c_api::Text(path, path_len, "room_outbox_options_load_file: path");
    if (!text) {
      return StoreError(err, text.error());
    }
    auto config = room_outbox::internal::LoadHookConfig(std::string(*text));
    if (!config) {
      return StoreError(err, config.error());
    }
    opts->config = std::move(*config);
    return StoreOk(err);
  });
}

room_outbox_status room_outbox_options_set(room_outbox_options* opts, const char* key,
                                           const char* value, size_t value_len,
                                           room_outbox_error** err) {
  return Guard("room_outbox_options_set", err, [&] {
    if (opts == nullptr) {
      return StoreError(err, ROOM_OUTBOX_INVALID_ARGUMENT, "room_outbox_options_set: NULL options");
    }
    auto name = room_outbox::c_api::Name(key, "room_outbox_options_set: key");
    if (!name) {
      return StoreError(err, name.error());
    }
    auto text = room_outbox::c_api::Text(value, value_len, "room_outbox_options_set: value");
    if (!text) {
      return StoreError(err, text.error());
    }
    if (auto set = room_outbox::c_api::SetOption(opts->config, *name, *text); !set) {
      return StoreError(err, set.error());
    }
    return StoreOk(err);
  });
}

void room_outbox_options_set_log(room_outbox_options* opts, room_outbox_log_fn log,
                                 void* user_data) {
  if (opts != nullptr) {
    opts->log = log;
    opts->log_user_data = user_data;
  }
}

}  // extern "C"
