#include "c_api/option_setter.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/config/secrets.h"
#include "core/config/toml_reader.h"
#include "core/wipe.h"
#include "hook_config.h"

namespace room_outbox::c_api {
namespace {

// Where set errors say they come from, in place of a file's path:line:col.
const std::string kSource = "options";

// `value` parsed as the TOML document "v = <value>" when that is one key holding something other
// than a string (a number, boolean, array or inline table); nullopt otherwise.
std::optional<toml::table> TypedValue(std::string_view value) {
  try {
    toml::table parsed = toml::parse("v = " + std::string(value));
    const toml::node* v = parsed.get("v");
    if (parsed.size() != 1 || v == nullptr || v->is_string()) {
      return std::nullopt;
    }
    return parsed;
  } catch (const toml::parse_error&) {
    return std::nullopt;
  }
}

// A root table holding a copy of `node` at the dotted `key` ("tencent_im.sdk_app_id"). Copies
// of toml++ nodes carry no source position, so errors name the key without a line.
toml::table Document(std::string_view key, const toml::node& node) {
  std::vector<std::string> parts;
  for (size_t start = 0;;) {
    const size_t dot = key.find('.', start);
    parts.emplace_back(key.substr(start, dot - start));
    if (dot == std::string_view::npos) {
      break;
    }
    start = dot + 1;
  }
  toml::table root;
  toml::table* table = &root;
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    table = table->insert_or_assign(parts[i], toml::table{}).first->second.as_table();
  }
  node.visit([&](const auto& n) { table->insert_or_assign(parts.back(), n); });
  return root;
}

// Removes the warnings that name `key` (each starts with "<key>: ").
void DropWarningsAbout(std::vector<std::string>& warnings, std::string_view key) {
  const std::string prefix = std::string(key) + ": ";
  std::erase_if(warnings, [&](const std::string& w) { return w.rfind(prefix, 0) == 0; });
}

// Reads `document` over a copy of `config` with the hook's readers; the secret of a *_file key
// it changed is read as well, and the warning about its file replaces the old one.
core::Result<core::SharedConfig> Apply(const core::SharedConfig& config,
                                       const toml::table& document) {
  core::SharedConfig next = config;
  std::optional<Error> error;
  core::TableReader top(&document, "", kSource, &error);
  internal::ReadHookSections(top, next, internal::RelayKeys::kRefuse);
  if (error) {
    return core::Fail(std::move(*error));
  }
  struct SecretFile {
    const char* key;
    const std::string& (*file)(const core::SharedConfig&);
    std::string& (*secret)(core::SharedConfig&);
    const char* env;
  };
  for (const SecretFile& s : {
           SecretFile{"mysql.password_file",
                      [](const core::SharedConfig& c) -> const std::string& {
                        return c.mysql_password_file;
                      },
                      [](core::SharedConfig& c) -> std::string& { return c.mysql.password; },
                      core::kMysqlPasswordEnv},
           SecretFile{"tencent_im.secret_key_file",
                      [](const core::SharedConfig& c) -> const std::string& {
                        return c.tim_secret_key_file;
                      },
                      [](core::SharedConfig& c) -> std::string& { return c.tencent_im.secret_key; },
                      core::kTimSecretKeyEnv},
       }) {
    if (s.file(next) == s.file(config)) {
      continue;
    }
    // The warning about the file this key named before goes; one about the new file comes.
    DropWarningsAbout(next.warnings, s.key);
    auto secret = core::LoadSecret(s.key, s.file(next), s.env, next.path, &next.warnings);
    if (!secret) {
      return core::Fail(secret.error());
    }
    core::ReplaceSecret(s.secret(next), std::move(*secret));
  }
  return next;
}

bool ValidKey(std::string_view key) {
  return !key.empty() && key.front() != '.' && key.back() != '.' &&
         key.find("..") == std::string_view::npos;
}

}  // namespace

core::Result<void> SetOption(core::SharedConfig& config, std::string_view key,
                             std::string_view value) {
  if (key == kMysqlPasswordKey) {
    core::ReplaceSecret(config.mysql.password, std::string(value));
    return {};
  }
  if (key == kTimSecretKeyKey) {
    core::ReplaceSecret(config.tencent_im.secret_key, std::string(value));
    return {};
  }
  if (!ValidKey(key)) {
    return core::Fail(ErrorCode::kInvalidArgument,
                      kSource + ": \"" + std::string(key) + "\" is not a key (\"section.key\")");
  }
  std::optional<Error> first_error;
  if (auto typed = TypedValue(value)) {
    auto applied = Apply(config, Document(key, *typed->get("v")));
    if (applied) {
      config = std::move(*applied);
      return {};
    }
    first_error = applied.error();
  }
  auto applied = Apply(config, Document(key, toml::value<std::string>(std::string(value))));
  if (!applied) {
    return core::Fail(first_error ? *first_error : applied.error());
  }
  config = std::move(*applied);
  return {};
}

}  // namespace room_outbox::c_api
