#include "worker/pack_rule.h"

#include <algorithm>

#include "room_outbox/options.h"

namespace room_outbox::relay {

size_t PackRule::LimitFor(const QueuedRow& front) const {
  if (front.row->pack_size > 0) {
    return std::min<size_t>(front.row->pack_size, kMaxPackEvents);
  }
  return std::max<size_t>(pack_max_events_, 1);
}

PackRule::Pack::Pack(const PackRule& rule, const QueuedRow& front)
    : rule_(rule),
      limit_(rule.LimitFor(front)),
      size_(rule.group_id_prefix_, front.envelope.room_id, front.envelope.event_id) {
  size_.Add(front.envelope_json);
}

bool PackRule::Pack::Take(const QueuedRow& next) {
  if (size_.events() >= limit_ || next.envelope_json.empty() ||
      size_.With(next.envelope_json) > rule_.max_body_bytes_) {
    return false;
  }
  size_.Add(next.envelope_json);
  return true;
}

}  // namespace room_outbox::relay
