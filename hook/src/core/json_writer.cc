#include "core/json_writer.h"

#include <charconv>

namespace room_outbox {

JsonWriter::JsonWriter()
    : scratch_(std::string()),
      serializer_(nlohmann::detail::output_adapter<char, std::string>(out_), ' ',
                  nlohmann::json::error_handler_t::strict) {}

void JsonWriter::String(std::string_view text) {
  scratch_.get_ref<std::string&>().assign(text);
  serializer_.dump(scratch_, /*pretty_print=*/false, /*ensure_ascii=*/false, 0);
}

void JsonWriter::String(std::string_view first, std::string_view second) {
  std::string& text = scratch_.get_ref<std::string&>();
  text.assign(first);
  text.append(second);
  serializer_.dump(scratch_, /*pretty_print=*/false, /*ensure_ascii=*/false, 0);
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

}  // namespace room_outbox
