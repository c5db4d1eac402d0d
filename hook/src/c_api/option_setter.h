// One option of the hook set by its relay.toml name ("mysql.port", "node_id", ...), validated by
// the very readers that read the file (hook_config.h), so a key added to them can be set here
// without a new function. Backs room_outbox_options_set (room_outbox/c.h).
#pragma once

#include <string_view>

#include "core/config/shared_config.h"
#include "core/result.h"

namespace room_outbox::c_api {

// The keys of the two secrets given from memory (never logged, never in an error text).
inline constexpr std::string_view kMysqlPasswordKey = "mysql.password";
inline constexpr std::string_view kTimSecretKeyKey = "tencent_im.secret_key";

// Sets `key` to `value` in `config`. `value` is tried as a TOML value first (3306, true,
// ["A", "B"]) when it parses as one that is not a string, then as the string itself; the first
// that the readers accept wins, else the error of the first try (kInvalidArgument naming the
// key). A changed *_file secret key reads its secret (LoadSecret, with config.path for relative
// paths). On failure `config` is unchanged.
core::Result<void> SetOption(core::SharedConfig& config, std::string_view key,
                             std::string_view value);

}  // namespace room_outbox::c_api
