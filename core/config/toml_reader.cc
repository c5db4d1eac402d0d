#include "core/config/toml_reader.h"

#include <cerrno>
#include <cstring>
#include <fstream>

#include "core/config/duration.h"
#include "core/input_limits.h"

namespace room_outbox::core {

Result<toml::table> ParseConfigFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int err = errno;
    return Fail(ErrorCode::kNotFound, "cannot read config \"" + path +
                                          "\": " + (err != 0 ? std::strerror(err) : "open failed"));
  }
  auto text = ReadBounded(in, kMaxConfigBytes, "config \"" + path + "\"");
  if (!text) {
    return Fail(text.error());
  }
  try {
    return toml::parse(*text, path);
  } catch (const toml::parse_error& e) {
    return Fail(ErrorCode::kInvalidArgument, path + ":" + std::to_string(e.source().begin.line) +
                                                 ":" + std::to_string(e.source().begin.column) +
                                                 ": " + std::string(e.description()));
  }
}

std::string TableReader::Where(const toml::source_region& source) const {
  if (source.begin.line == 0) {
    return path_;
  }
  return path_ + ":" + std::to_string(source.begin.line) + ":" +
         std::to_string(source.begin.column);
}

std::string TableReader::Name(std::string_view key) const {
  return prefix_.empty() ? std::string(key) : prefix_ + "." + std::string(key);
}

void TableReader::SetError(const toml::node* node, std::string_view key, const std::string& what) {
  if (failed()) {
    return;
  }
  std::string where = node != nullptr ? Where(node->source()) : path_;
  *error_ = Error{ErrorCode::kInvalidArgument, where + ": " + Name(key) + ": " + what};
}

void TableReader::Known(std::string_view key) {
  if (known_.insert(std::string(key)).second && names_ != nullptr) {
    names_->push_back(Name(key));
  }
}

const toml::node* TableReader::Get(std::string_view key) {
  Known(key);
  if (table_ == nullptr || failed()) {
    return nullptr;
  }
  return table_->get(key);
}

std::optional<std::string> TableReader::String(std::string_view key) {
  const toml::node* node = Get(key);
  if (node == nullptr) {
    return std::nullopt;
  }
  if (const auto* v = node->as_string()) {
    return v->get();
  }
  SetError(node, key, "expected a string");
  return std::nullopt;
}

std::optional<int64_t> TableReader::Integer(std::string_view key) {
  const toml::node* node = Get(key);
  if (node == nullptr) {
    return std::nullopt;
  }
  if (const auto* v = node->as_integer()) {
    return v->get();
  }
  SetError(node, key, "expected an integer");
  return std::nullopt;
}

std::optional<double> TableReader::Number(std::string_view key) {
  const toml::node* node = Get(key);
  if (node == nullptr) {
    return std::nullopt;
  }
  if (const auto* v = node->as_integer()) {
    return static_cast<double>(v->get());
  }
  if (const auto* v = node->as_floating_point()) {
    return v->get();
  }
  SetError(node, key, "expected a number");
  return std::nullopt;
}

std::optional<bool> TableReader::Bool(std::string_view key) {
  const toml::node* node = Get(key);
  if (node == nullptr) {
    return std::nullopt;
  }
  if (const auto* v = node->as_boolean()) {
    return v->get();
  }
  SetError(node, key, "expected true or false");
  return std::nullopt;
}

std::optional<std::chrono::milliseconds> TableReader::Duration(std::string_view key) {
  const toml::node* node = Get(key);
  if (node == nullptr) {
    return std::nullopt;
  }
  const auto* v = node->as_string();
  if (v == nullptr) {
    SetError(node, key, "expected a duration string such as \"500ms\", \"3s\", \"2m\", \"24h\"");
    return std::nullopt;
  }
  auto parsed = ParseDuration(v->get());
  if (!parsed) {
    SetError(node, key, parsed.error().message);
    return std::nullopt;
  }
  return *parsed;
}

bool TableReader::CheckAtMost(std::string_view key, std::chrono::milliseconds value,
                              std::chrono::milliseconds max) {
  if (value <= max) {
    return true;
  }
  SetError(NodeOf(key), key,
           "must be at most " + FormatDuration(max) + ", got " + FormatDuration(value));
  return false;
}

std::optional<std::vector<std::string>> TableReader::StringArray(std::string_view key) {
  const toml::node* node = Get(key);
  if (node == nullptr) {
    return std::nullopt;
  }
  const auto* array = node->as_array();
  if (array == nullptr) {
    SetError(node, key, "expected an array of strings");
    return std::nullopt;
  }
  std::vector<std::string> out;
  for (const toml::node& item : *array) {
    const auto* s = item.as_string();
    if (s == nullptr) {
      SetError(&item, key, "expected an array of strings");
      return std::nullopt;
    }
    out.push_back(s->get());
  }
  return out;
}

const toml::table* TableReader::Table(std::string_view key) {
  const toml::node* node = Get(key);
  if (node == nullptr) {
    return nullptr;
  }
  if (const auto* t = node->as_table()) {
    return t;
  }
  SetError(node, key, "expected a table [" + Name(key) + "]");
  return nullptr;
}

void TableReader::CheckUnknown() {
  if (table_ == nullptr || failed()) {
    return;
  }
  for (auto&& [key, node] : *table_) {
    if (known_.count(std::string(key.str())) == 0) {
      *error_ = Error{ErrorCode::kInvalidArgument,
                      Where(key.source()) + ": unknown key '" + Name(key.str()) + "'"};
      return;
    }
  }
}

}  // namespace room_outbox::core
