// WriteSortedJson: JSON text written as nlohmann::json::dump() would write it after parsing it
// (compact, keys sorted, numbers and strings in dump()'s formats), straight from the parser's
// events, without building the document, when every object of the text already has its keys in
// ascending order (as dump() itself writes them). The commit path writes every event's payload
// this way; a text with keys in another order, duplicate keys or a syntax error is left to the
// caller's parse and dump().
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "core/json_writer.h"

namespace room_outbox::core {

// A SAX handler for nlohmann::json::sax_parse: the parser's events written out as dump() writes
// the document they build. Refuses (returns false, which stops the parse) a key not above the
// previous key of its object, and a document that is not one object. It can also be handed the
// events of one object value inside a larger document: done() tells when that object closed.
class SortedJsonEvents {
 public:
  explicit SortedJsonEvents(JsonWriter& writer) : writer_(writer) {}

  bool null() { return Scalar("null"); }
  bool boolean(bool value) { return Scalar(value ? "true" : "false"); }
  bool number_integer(nlohmann::json::number_integer_t value) {
    Separate();
    writer_.Integer(value);
    return true;
  }
  bool number_unsigned(nlohmann::json::number_unsigned_t value) {
    Separate();
    writer_.Value(nlohmann::json(value));
    return true;
  }
  bool number_float(nlohmann::json::number_float_t value, const nlohmann::json::string_t& /*raw*/) {
    Separate();
    writer_.Value(nlohmann::json(value));
    return true;
  }
  bool string(nlohmann::json::string_t& value) {
    Separate();
    writer_.String(value);
    return true;
  }
  bool binary(nlohmann::json::binary_t& /*value*/) { return false; }  // not in JSON text
  bool start_object(std::size_t /*elements*/) {
    if (depth_ == 0 && started_) {
      return false;  // a second document
    }
    Separate();
    writer_.Raw("{");
    Push(true);
    return true;
  }
  bool key(nlohmann::json::string_t& value) {
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

// Appends `text` to `writer` as dump() of its parse and returns true when `text` is one JSON
// object whose objects (at every depth) all have strictly ascending keys (byte order, as
// std::string compares). Otherwise returns false, and what was appended is unusable: the caller
// starts its text again. The caller bounds the depth beforehand (CheckJsonLimits).
bool WriteSortedJson(JsonWriter& writer, std::string_view text);

}  // namespace room_outbox::core
