// Reading the TOML config file (relay.toml, which the hook's hosts read too): the only code that
// touches toml++. Every key is checked at load time: unknown keys, wrong types, malformed
// durations and invalid values are errors that name the key and file:line:col where the file has
// a position for it.
#pragma once

#include <toml++/toml.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace room_outbox::core {

// Reads and parses `path` (at most kMaxConfigBytes). Errors: kNotFound (unreadable),
// kInvalidArgument ("path:line:col: description" for a syntax error, or too large).
Result<toml::table> ParseConfigFile(const std::string& path);

// Reads one TOML table. Each accessor records its key as known (present or not), so that
// CheckUnknown can report every other key. The first error wins; later calls are no-ops.
class TableReader {
 public:
  // `table` null: an absent section (every key then takes its default). `error` receives the
  // first error of every reader sharing it. `names`, when set, receives the dotted name of every
  // key and table asked for by this reader and its sections (ConfigKeys: what a loader accepts).
  TableReader(const toml::table* table, std::string prefix, const std::string& path,
              std::optional<Error>* error, std::vector<std::string>* names = nullptr)
      : table_(table), prefix_(std::move(prefix)), path_(path), error_(error), names_(names) {}

  bool failed() const { return error_->has_value(); }
  // Records an error for `key` at `node`'s position (the file when null).
  void SetError(const toml::node* node, std::string_view key, const std::string& what);

  // Each returns the value when present and well typed; otherwise nullopt (with an error set
  // when present but ill typed).
  std::optional<std::string> String(std::string_view key);
  std::optional<int64_t> Integer(std::string_view key);
  std::optional<double> Number(std::string_view key);
  std::optional<bool> Bool(std::string_view key);
  // A duration string such as "500ms" (ParseDuration).
  std::optional<std::chrono::milliseconds> Duration(std::string_view key);
  std::optional<std::vector<std::string>> StringArray(std::string_view key);
  // A sub-table; null when absent.
  const toml::table* Table(std::string_view key);
  // A reader of the sub-table `key` (absent: a reader of nothing) sharing this reader's error.
  TableReader Section(std::string_view key) {
    const toml::table* table = Table(key);
    return TableReader(table, Name(key), path_, error_, names_);
  }
  // Marks `key` as known without reading it (a section or key another reader of the same file
  // owns).
  void Accept(std::string_view key) { Known(key); }
  // The node of `key` for positions in value errors (null when absent).
  const toml::node* NodeOf(std::string_view key) const {
    return table_ == nullptr ? nullptr : table_->get(key);
  }
  // The node of `key`, else of `fallback` (a rule broken by a default points at the key set).
  const toml::node* NodeOrFallback(std::string_view key, std::string_view fallback) const {
    const toml::node* node = NodeOf(key);
    return node != nullptr ? node : NodeOf(fallback);
  }
  // Sets an error for the first key of the table that no accessor asked for.
  void CheckUnknown();

  // A duration key where "<= 0 or missing means the default" (the rule of every duration but
  // room_min_interval): `*out` changes only for a positive value.
  // A value above `max` is an error naming the key and the maximum.
  template <class D>
  void PositiveDuration(std::string_view key, D* out, std::chrono::milliseconds max) {
    if (auto v = Duration(key); v && v->count() > 0 && CheckAtMost(key, *v, max)) {
      *out = std::chrono::duration_cast<D>(*v);
    }
  }
  // Whether `value` of `key` is at most `max`; if not, sets an error ("must be at most 1h").
  bool CheckAtMost(std::string_view key, std::chrono::milliseconds value,
                   std::chrono::milliseconds max);

 private:
  const toml::node* Get(std::string_view key);
  void Known(std::string_view key);
  std::string Where(const toml::source_region& source) const;
  std::string Name(std::string_view key) const;

  const toml::table* table_;
  std::string prefix_;
  const std::string& path_;
  std::optional<Error>* error_;
  std::vector<std::string>* names_;
  std::set<std::string> known_;
};

}  // namespace room_outbox::core
