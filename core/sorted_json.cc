#include "core/sorted_json.h"

#include <nlohmann/json.hpp>

namespace room_outbox::core {
bool WriteSortedJson(JsonWriter& writer, std::string_view text) {
  SortedJsonEvents sax(writer);
  try {
    return nlohmann::json::sax_parse(text, &sax, nlohmann::json::input_format_t::json,
                                     /*strict=*/true,
                                     /*ignore_comments=*/false) &&
           sax.done();
  } catch (const nlohmann::json::exception&) {
    return false;
  }
}

}  // namespace room_outbox::core
