#include "sync_packs.h"

#include "core/tencent/im_request.h"

namespace room_outbox::internal {

std::vector<size_t> SplitIntoPacks(std::span<const PackCandidate> events, std::string_view room_id,
                                   const PackLimits& limits) {
  std::vector<size_t> packs;
  size_t at = 0;
  while (at < events.size()) {
    size_t end = at + 1;
    if (limits.max_events > 1) {
      core::PackBodySize body(limits.group_id_prefix, room_id, events[at].event_id);
      body.Add(events[at].envelope_json);
      while (end < events.size() && end - at < limits.max_events &&
             body.With(events[end].envelope_json) <= limits.max_body_bytes) {
        body.Add(events[end].envelope_json);
        ++end;
      }
    }
    packs.push_back(end - at);
    at = end;
  }
  return packs;
}

}  // namespace room_outbox::internal
