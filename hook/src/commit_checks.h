// Checks at commit: a command whose events could never be stored whole or delivered is refused
// before BEGIN with kInvalidArgument naming the event and the limit, and nothing is written.
//
//   - ids and names fit their columns (schema/001: command_id, room_id, request_id and event_id
//     128 characters, command_type and event_type 64), counted in characters as the utf8mb4
//     columns count them, and are valid UTF-8;
//   - a room whose events are sent to IM has a GroupId Tencent accepts:
//     group_id_prefix + room_id is printable ASCII (0x20-0x7e), at most 48 bytes, and does not
//     start with "@TGS#" (the prefix of IM-assigned ids);
//   - required fields are not empty;
//   - an event's payload is nested at most kMaxPayloadDepth levels deep (arrays and objects),
//     counted by a scan that keeps no stack, before any recursive JSON parser sees it.
// The IM body-size limit ([tencent_im] max_body_bytes) needs the encoded envelope; the hook
// checks it when it builds the rows (hook_impl.cc), before BEGIN as well.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "room_outbox/error.h"
#include "room_outbox/hook.h"

namespace room_outbox::internal {

inline constexpr size_t kMaxIdChars = 128;        // command_id, room_id, request_id, event_id
inline constexpr size_t kMaxTypeChars = 64;       // command_type, event_type
inline constexpr size_t kMaxGroupIdBytes = 48;    // Tencent's limit for a custom GroupId
inline constexpr std::string_view kImAssignedGroupPrefix = "@TGS#";
// The payload is the envelope's "payload" object: with the envelope itself, 64 levels
// (kMaxJsonDepth of input_limits.h, whose JsonNestingDepth measures it).
inline constexpr size_t kMaxPayloadDepth = 63;

// The GroupId rule alone: empty when `group_id` is acceptable, else why not.
std::string GroupIdProblem(std::string_view group_id);
// The same rule for group_id_prefix + room_id, without building the concatenation.
std::string GroupIdProblem(std::string_view prefix, std::string_view room_id);

// `sends(event_type)` says whether events of that type go to IM (skip_event_types do not); the
// GroupId rule applies only when at least one event does.
Status CheckCommand(const Command& command, const std::vector<Event>& events,
                    std::string_view group_id_prefix,
                    const std::vector<std::string>& skip_event_types);

}  // namespace room_outbox::internal
