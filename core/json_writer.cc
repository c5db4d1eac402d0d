#include "core/json_writer.h"

#include <charconv>

namespace room_outbox::core {
namespace {

// True when dump() writes `text` between its quotes unchanged: printable ASCII without a quote or
// a backslash (identifiers, event types, group ids). Anything else goes through the serializer.
bool WrittenAsItIs(std::string_view text) {
  for (const char c : text) {
    if (c < 0x20 || c > 0x7e || c == '"' || c == '\\') {
      return false;
    }
  }
  return true;
}

}  // namespace

JsonWriter::JsonWriter()
    : scratch_(std::string()),
      serializer_(nlohmann::detail::output_adapter<char, std::string>(out_), ' ',
                  nlohmann::json::error_handler_t::strict) {}

void JsonWriter::String(std::string_view text) {
  if (WrittenAsItIs(text)) {
    out_.push_back('"');
    out_.append(text);
    out_.push_back('"');
    return;
  }
  scratch_.get_ref<std::string&>().assign(text);
  serializer_.dump(scratch_, /*pretty_print=*/false, /*ensure_ascii=*/false, 0);
}

void JsonWriter::String(std::string_view first, std::string_view second) {
  if (WrittenAsItIs(first) && WrittenAsItIs(second)) {
    out_.push_back('"');
    out_.append(first);
    out_.append(second);
    out_.push_back('"');
    return;
  }
  std::string& text = scratch_.get_ref<std::string&>();
  text.assign(first);
  text.append(second);
  serializer_.dump(scratch_, /*pretty_print=*/false, /*ensure_ascii=*/false, 0);
}

// dump() with ensure_ascii off escapes only the quote, the backslash and the bytes below 0x20:
// \b \t \n \f \r in two bytes, the others as \u00XX.
size_t JsonWriter::StringLength(std::string_view text) {
  size_t length = text.size() + 2;
  for (const char c : text) {
    switch (c) {
      case '"':
      case '\\':
      case '\b':
      case '\t':
      case '\n':
      case '\f':
      case '\r':
        length += 1;
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) length += 5;
    }
  }
  return length;
}

void JsonWriter::Integer(int64_t value) {
  char digits[24];
  const auto [end, ec] = std::to_chars(digits, digits + sizeof digits, value);
  (void)ec;  // 24 characters hold any int64_t
  out_.append(digits, static_cast<size_t>(end - digits));
}

void JsonWriter::Value(const nlohmann::json& value) {
  serializer_.dump(value, /*pretty_print=*/false, /*ensure_ascii=*/false, 0);
}

}  // namespace room_outbox::core
