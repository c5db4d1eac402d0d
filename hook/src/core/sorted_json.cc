#include "core/sorted_json.h"

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace room_outbox {
namespace {

using nlohmann::json;

// The parser's events written out as dump() writes the document they build. Refuses (returns
// false, which stops the parse) a key not above the previous key of its object.
class SortedWriter {
 public:
  explicit SortedWriter(JsonWriter& writer) : writer_(writer) {}

  bool null() { return Scalar("null"); }
  bool boolean(bool value) { return Scalar(value ? "true" : "false"); }
  bool number_integer(json::number_integer_t value) {
    Separate();
    writer_.Integer(value);
    return true;
  }
  bool number_unsigned(json::number_unsigned_t value) {
    Separate();
    writer_.Value(json(value));
    return true;
  }
  bool number_float(json::number_float_t value, const json::string_t& /*raw*/) {
    Separate();
    writer_.Value(json(value));
    return true;
  }
  bool string(json::string_t& value) {
    Separate();
    writer_.String(value);
    return true;
  }
  bool binary(json::binary_t& /*value*/) { return false; }  // not in JSON text
  bool start_object(std::size_t /*elements*/) {
    if (depth_ == 0 && started_) {
      return false;  // a second document
    }
    Separate();
    writer_.Raw("{");
    Push(true);
    return true;
  }
  bool key(json::string_t& value) {
    Level& level = levels_[depth_ - 1];
    if (!level.first && std::string_view(value) <= std::string_view(level.last_key)) {
      return false;  // out of order or repeated: dump() of the parse would differ
    }
    level.last_key.assign(value);
    writer_.Raw(level.first ? "" : ",");
    level.first = false;
    writer_.String(value);
    writer_.Raw(":");
    return true;
  }
  bool end_object() { return Pop("}"); }
  bool start_array(std::size_t /*elements*/) {
    if (depth_ == 0) {
      return false;  // the payload must be an object
    }
    Separate();
    writer_.Raw("[");
    Push(false);
    return true;
  }
  bool end_array() { return Pop("]"); }
  bool parse_error(std::size_t /*position*/, const std::string& /*last_token*/,
                   const nlohmann::detail::exception& /*error*/) {
    return false;
  }

  bool done() const { return depth_ == 0 && started_; }

 private:
  struct Level {
    bool object = false;
    bool first = true;     // nothing written in it yet
    std::string last_key;  // an object's key written last
  };

  bool Scalar(const char* text) {
    if (depth_ == 0) {
      return false;  // the payload must be an object
    }
    Separate();
    writer_.Raw(text);
    return true;
  }

  // The comma before an array element (an object's values follow their keys).
  void Separate() {
    if (depth_ == 0) {
      return;
    }
    Level& level = levels_[depth_ - 1];
    if (level.object) {
      return;  // an object's values follow their keys
    }
    writer_.Raw(level.first ? "" : ",");
    level.first = false;
  }

  void Push(bool object) {
    if (levels_.size() <= depth_) {
      levels_.emplace_back();
    }
    Level& level = levels_[depth_];  // reused: its key buffer keeps its capacity
    level.object = object;
    level.first = true;
    level.last_key.clear();
    ++depth_;
    started_ = true;
  }

  bool Pop(const char* close) {
    writer_.Raw(close);
    --depth_;
    return true;
  }

  JsonWriter& writer_;
  std::vector<Level> levels_;
  std::size_t depth_ = 0;
  bool started_ = false;
};

}  // namespace

bool WriteSortedJson(JsonWriter& writer, std::string_view text) {
  SortedWriter sax(writer);
  try {
    return json::sax_parse(text, &sax, json::input_format_t::json, /*strict=*/true,
                           /*ignore_comments=*/false) &&
           sax.done();
  } catch (const json::exception&) {
    return false;
  }
}

}  // namespace room_outbox
