#include "commit_checks.h"

#include <algorithm>
#include <array>
#include <optional>

#include "core/input_limits.h"

namespace room_outbox::internal {
namespace {

// The number of UTF-8 characters of `text`, or nullopt when it is not valid UTF-8.
std::optional<size_t> Utf8Chars(std::string_view text) {
  size_t chars = 0;
  for (size_t i = 0; i < text.size(); ++chars) {
    const auto lead = static_cast<unsigned char>(text[i]);
    size_t len = lead < 0x80 ? 1 : (lead >> 5) == 0x6 ? 2 : (lead >> 4) == 0xE ? 3
                                   : (lead >> 3) == 0x1E ? 4 : 0;
    if (len == 0 || lead == 0xC0 || lead == 0xC1 || lead > 0xF4 || i + len > text.size()) {
      return std::nullopt;
    }
    for (size_t k = 1; k < len; ++k) {
      if ((static_cast<unsigned char>(text[i + k]) & 0xC0) != 0x80) return std::nullopt;
    }
    i += len;
  }
  return chars;
}

// `text` with bytes outside printable ASCII written as \xNN, cut to 64 bytes: safe in an error.
std::string Printable(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (char c : text.substr(0, 64)) {
    const auto b = static_cast<unsigned char>(c);
    if (b >= 0x20 && b <= 0x7e) {
      out += c;
    } else {
      out += "\\x";
      out += kHex[b >> 4];
      out += kHex[b & 0xF];
    }
  }
  return out;
}

Status Invalid(std::string what) { return Error{ErrorCode::kInvalidArgument, std::move(what)}; }

// `owner()` names the command or event in the error, e.g. "event ev-1"; it is called only
// when the check fails.
template <class Owner>
Status CheckText(const Owner& owner, std::string_view field, std::string_view value,
                 size_t max_chars, bool required) {
  if (required && value.empty()) {
    return Invalid(owner() + ": " + std::string(field) + " is empty");
  }
  const std::optional<size_t> chars = Utf8Chars(value);
  if (!chars) {
    return Invalid(owner() + ": " + std::string(field) + " is not valid UTF-8");
  }
  if (*chars > max_chars) {
    return Invalid(owner() + ": " + std::string(field) + " has " + std::to_string(*chars) +
                   " characters, over the column's " + std::to_string(max_chars));
  }
  return {};
}

Status CheckCommandFields(const Command& command) {
  // The id itself may be what is wrong: name the command by a cut of it.
  const auto owner = [&] { return "command " + Printable(command.command_id); };
  if (Status s = CheckText(owner, "command_id", command.command_id, kMaxIdChars, true); !s.ok()) {
    return s;
  }
  if (Status s = CheckText(owner, "room_id", command.room_id, kMaxIdChars, true); !s.ok()) {
    return s;
  }
  if (Status s = CheckText(owner, "command_type", command.command_type, kMaxTypeChars, true);
      !s.ok()) {
    return s;
  }
  return CheckText(owner, "request_id", command.request_id, kMaxIdChars, false);
}

Status CheckEventFields(const Command& command, const Event& event, size_t index) {
  if (event.event_id.empty()) {
    return Invalid("command " + Printable(command.command_id) + ": event " + std::to_string(index) +
                   " has an empty event_id");
  }
  const auto owner = [&] { return "event " + Printable(event.event_id); };
  if (Status s = CheckText(owner, "event_id", event.event_id, kMaxIdChars, true); !s.ok()) {
    return s;
  }
  if (Status s = CheckText(owner, "event_type", event.event_type, kMaxTypeChars, true); !s.ok()) {
    return s;
  }
  if (core::JsonNestingDepth(event.payload, kMaxPayloadDepth) > kMaxPayloadDepth) {
    return Invalid(owner() + ": payload is nested deeper than " +
                   std::to_string(kMaxPayloadDepth) + " levels");
  }
  return {};
}

}  // namespace

std::string GroupIdProblem(std::string_view group_id) { return GroupIdProblem(group_id, ""); }

std::string GroupIdProblem(std::string_view prefix, std::string_view room_id) {
  const size_t bytes = prefix.size() + room_id.size();
  if (bytes > kMaxGroupIdBytes) {
    return "is " + std::to_string(bytes) + " bytes, over IM's " +
           std::to_string(kMaxGroupIdBytes);
  }
  // The first bytes of prefix + room_id, without building it.
  std::array<char, kImAssignedGroupPrefix.size()> head{};
  const size_t from_prefix = std::min(prefix.size(), head.size());
  const size_t from_room = std::min(room_id.size(), head.size() - from_prefix);
  std::copy_n(prefix.begin(), from_prefix, head.begin());
  std::copy_n(room_id.begin(), from_room, head.begin() + from_prefix);
  if (from_prefix + from_room == head.size() &&
      std::string_view(head.data(), head.size()) == kImAssignedGroupPrefix) {
    return "starts with " + std::string(kImAssignedGroupPrefix) + ", which IM reserves";
  }
  const auto printable = [](std::string_view part) {
    return std::all_of(part.begin(), part.end(), [](char c) {
      return static_cast<unsigned char>(c) >= 0x20 && static_cast<unsigned char>(c) <= 0x7e;
    });
  };
  if (!printable(prefix) || !printable(room_id)) {
    return "has a byte outside printable ASCII (0x20-0x7e)";
  }
  return "";
}

Status CheckCommand(const Command& command, const std::vector<Event>& events,
                    std::string_view group_id_prefix,
                    const std::vector<std::string>& skip_event_types) {
  if (Status s = CheckCommandFields(command); !s.ok()) {
    return s;
  }
  bool sent = false;
  for (size_t i = 0; i < events.size(); ++i) {
    if (Status s = CheckEventFields(command, events[i], i); !s.ok()) {
      return s;
    }
    sent = sent || std::find(skip_event_types.begin(), skip_event_types.end(),
                             events[i].event_type) == skip_event_types.end();
  }
  if (sent) {
    if (std::string problem = GroupIdProblem(group_id_prefix, command.room_id);
        !problem.empty()) {
      const std::string group_id = std::string(group_id_prefix) + command.room_id;
      return Invalid("command " + Printable(command.command_id) + ": GroupId \"" +
                     Printable(group_id) + "\" (group_id_prefix + room_id) " + problem);
    }
  }
  return {};
}

}  // namespace room_outbox::internal
