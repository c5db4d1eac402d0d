#include "core/tencent/im_answer.h"

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>

#include "core/input_limits.h"

namespace room_outbox::core {
namespace {

constexpr size_t kMaxInfo = 120;

}  // namespace

// last_error is stored in a utf8mb4 column, hence the cut at a character boundary; one log line
// stays one line, hence the replaced control characters.
std::string ShortText(std::string_view text) {
  if (text.size() > kMaxInfo) {
    size_t cut = kMaxInfo;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) {
      --cut;
    }
    text = text.substr(0, cut);
  }
  std::string out(text);
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      c = ' ';
    }
  }
  return out;
}

namespace {

// The answer's top-level fields from the parser's events, without building the document. A
// field named twice counts as its last value, as a parsed document keeps it; nested values are
// passed over.
class AnswerEvents {
 public:
  explicit AnswerEvents(ImAnswer& answer) : answer_(answer) {}

  bool null() { return Scalar(); }
  bool boolean(bool /*value*/) { return Scalar(); }
  bool number_integer(nlohmann::json::number_integer_t value) {
    if (Top() && current_ == Field::kCode) {
      Code(value >= std::numeric_limits<int>::min() && value <= std::numeric_limits<int>::max(),
           value);
    }
    return Scalar();
  }
  bool number_unsigned(nlohmann::json::number_unsigned_t value) {
    if (Top() && current_ == Field::kCode) {
      Code(value <= static_cast<uint64_t>(std::numeric_limits<int>::max()),
           static_cast<int64_t>(value));
    }
    return Scalar();
  }
  bool number_float(nlohmann::json::number_float_t /*value*/, const std::string& /*raw*/) {
    return Scalar();
  }
  bool string(std::string& value) {
    if (Top()) {
      TakeString(value);
    }
    return Scalar();
  }
  bool binary(nlohmann::json::binary_t& /*value*/) { return false; }
  bool start_object(std::size_t /*elements*/) { return Open(); }
  bool end_object() { return Close(); }
  bool start_array(std::size_t /*elements*/) { return depth_ > 0 && Open(); }
  bool end_array() { return Close(); }
  bool key(std::string& name) {
    if (depth_ == 1) {
      current_ = FieldNamed(name);
      Reset(current_);
    }
    return true;
  }
  bool parse_error(std::size_t /*position*/, const std::string& /*last_token*/,
                   const nlohmann::detail::exception& /*error*/) {
    return false;
  }

  bool complete() const { return closed_; }
  bool code_out_of_range() const { return code_out_of_range_; }

 private:
  enum class Field { kOther, kAction, kCode, kInfo, kDropReason };

  static Field FieldNamed(std::string_view name) {
    if (name == "ActionStatus") return Field::kAction;
    if (name == "ErrorCode") return Field::kCode;
    if (name == "ErrorInfo") return Field::kInfo;
    if (name == "MsgDropReason") return Field::kDropReason;
    return Field::kOther;
  }

  bool Top() const { return depth_ == 1; }
  bool Scalar() const { return depth_ > 0; }  // a scalar document is not IM's answer
  bool Open() {
    if ((depth_ == 0 && closed_) || depth_ >= static_cast<int>(kMaxJsonDepth)) {
      return false;  // a second document, or nested past the limit (reported by the caller)
    }
    ++depth_;
    return true;
  }
  bool Close() {
    if (--depth_ == 0) {
      closed_ = true;
    }
    return true;
  }

  void Reset(Field field) {
    switch (field) {
      case Field::kAction:
        answer_.action.clear();
        break;
      case Field::kCode:
        answer_.code = 0;
        answer_.has_code = false;
        code_out_of_range_ = false;
        break;
      case Field::kInfo:
        answer_.info.clear();
        break;
      case Field::kDropReason:
        answer_.drop_reason.clear();
        break;
      case Field::kOther:
        break;
    }
  }

  void Code(bool fits, int64_t value) {
    code_out_of_range_ = !fits;
    answer_.code = fits ? static_cast<int>(value) : 0;
    answer_.has_code = fits;
  }

  void TakeString(std::string& value) {
    switch (current_) {
      case Field::kAction:
        answer_.action = std::move(value);
        break;
      case Field::kInfo:
        answer_.info = ShortText(value);
        break;
      case Field::kDropReason:
        answer_.drop_reason = std::move(value);
        break;
      default:
        break;
    }
  }

  ImAnswer& answer_;
  Field current_ = Field::kOther;
  int depth_ = 0;
  bool closed_ = false;
  bool code_out_of_range_ = false;
};

}  // namespace

std::optional<ImAnswer> ReadImAnswer(std::string_view body, std::string& why) {
  if (auto s = CheckJsonSize("invalid IM response", body, kMaxImResponseBytes); !s.ok()) {
    why = s.error().message;
    return std::nullopt;
  }
  ImAnswer answer;
  AnswerEvents events(answer);
  bool parsed = false;
  try {
    parsed = nlohmann::json::sax_parse(body, &events, nlohmann::json::input_format_t::json,
                                       /*strict=*/true, /*ignore_comments=*/false) &&
             events.complete();
  } catch (const nlohmann::json::exception&) {
    parsed = false;
  }
  if (!parsed) {
    const Status limits = CheckJsonLimits("invalid IM response", body, kMaxImResponseBytes);
    why = limits.ok() ? "invalid IM response (not JSON)" : limits.error().message;
    return std::nullopt;
  }
  if (events.code_out_of_range()) {
    // Read as an int it would truncate: 4294967296 read as 0 (success), 4294977298 as 10002.
    why = "invalid IM response (ErrorCode out of range)";
    return std::nullopt;
  }
  return answer;
}

}  // namespace room_outbox::core
