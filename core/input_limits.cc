#include "core/input_limits.h"

#include <array>

#include "core/wipe.h"

namespace room_outbox::core {

size_t JsonNestingDepth(std::string_view text, size_t stop_above) {
  size_t depth = 0;
  size_t deepest = 0;
  bool in_string = false;
  bool escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    switch (c) {
      case '"':
        in_string = true;
        break;
      case '[':
      case '{':
        if (++depth > deepest) {
          deepest = depth;
          if (deepest > stop_above) {
            return deepest;
          }
        }
        break;
      case ']':
      case '}':
        if (depth > 0) {
          --depth;
        }
        break;
      default:
        break;
    }
  }
  return deepest;
}

Status CheckJsonSize(std::string_view what, std::string_view text, size_t max_bytes) {
  if (text.size() > max_bytes) {
    return Error{ErrorCode::kInvalidArgument,
                 std::string(what) + ": " + std::to_string(text.size()) +
                     " bytes, more than the limit of " + std::to_string(max_bytes)};
  }
  return {};
}

Status CheckJsonLimits(std::string_view what, std::string_view text, size_t max_bytes,
                       size_t max_depth) {
  if (Status size = CheckJsonSize(what, text, max_bytes); !size.ok()) {
    return size;
  }
  if (JsonNestingDepth(text, max_depth) > max_depth) {
    return Error{ErrorCode::kInvalidArgument, std::string(what) + ": nested deeper than " +
                                                  std::to_string(max_depth) + " levels"};
  }
  return {};
}

Result<std::string> ReadBounded(std::istream& in, size_t max_bytes, std::string_view what) {
  std::string out;
  std::array<char, 8192> chunk;
  while (in) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    const auto n = static_cast<size_t>(in.gcount());
    if (out.size() + n > max_bytes) {
      return Fail(ErrorCode::kInvalidArgument,
                  std::string(what) + " is larger than " + std::to_string(max_bytes) + " bytes");
    }
    out.append(chunk.data(), n);
  }
  if (in.bad()) {
    return Fail(ErrorCode::kInvalidArgument, std::string(what) + ": read error");
  }
  return out;
}

Result<std::string> CheckSecretContent(std::string_view what, std::string content) {
  if (content.size() > kMaxSecretBytes) {
    WipeString(content);
    return Fail(ErrorCode::kInvalidArgument, std::string(what) + " is larger than " +
                                                 std::to_string(kMaxSecretBytes) + " bytes");
  }
  if (!content.empty() && content.back() == '\n') {
    content.pop_back();
    if (!content.empty() && content.back() == '\r') {
      content.pop_back();
    }
  }
  for (size_t i = 0; i < content.size(); ++i) {
    const auto c = static_cast<unsigned char>(content[i]);
    if (c < 0x20 || c == 0x7f) {
      WipeString(content);
      return Fail(ErrorCode::kInvalidArgument,
                  std::string(what) + " holds a control byte at offset " + std::to_string(i) +
                      (c == 0      ? " (a NUL)"
                       : c == '\n' ? " (more than one line)"
                                   : "") +
                      "; a secret file holds the secret and at most one trailing newline");
    }
  }
  Result<std::string> checked(std::move(content));
  WipeString(content);  // what the move left in the parameter
  return checked;
}

}  // namespace room_outbox::core
