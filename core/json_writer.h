// JsonWriter: JSON text appended piece by piece into one buffer that is reused across texts, so
// writing a text allocates nothing once the buffer has grown to its length. Strings and values
// are serialised by nlohmann's own serializer (the escaping and number formats of
// nlohmann::json::dump(), compact, ensure_ascii off, invalid UTF-8 refused); the caller writes
// the punctuation and the keys it knows to be plain.
//
// Not copyable or movable (the serializer points at the buffer). Not thread-safe: one owner.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace room_outbox::core {

class JsonWriter {
 public:
  JsonWriter();
  JsonWriter(const JsonWriter&) = delete;
  JsonWriter& operator=(const JsonWriter&) = delete;

  // Empties the text, keeping the buffer.
  void Clear() { out_.clear(); }
  const std::string& text() const { return out_; }

  // Appends `json` as it is: punctuation, plain keys ("\"event_id\":"), JSON text known to be
  // what nlohmann::json::dump() writes.
  void Raw(std::string_view json) { out_.append(json); }
  // Appends `text` as a JSON string, quoted and escaped as dump() escapes it. Throws
  // nlohmann::json::type_error (316) when `text` is not valid UTF-8; the text is then unusable
  // until Clear().
  void String(std::string_view text);
  // Appends the concatenation of `first` and `second` as one JSON string, as String() does.
  void String(std::string_view first, std::string_view second);
  // The length String(text) appends, quotes included, for valid UTF-8 `text` (no other check).
  static size_t StringLength(std::string_view text);
  // Appends the number in decimal, as dump() writes integers.
  void Integer(int64_t value);
  // Appends dump() of `value`. Throws as dump() throws.
  void Value(const nlohmann::json& value);

 private:
  std::string out_;
  nlohmann::json scratch_;  // a string value whose buffer String() reuses
  nlohmann::detail::serializer<nlohmann::json> serializer_;
};

}  // namespace room_outbox::core
