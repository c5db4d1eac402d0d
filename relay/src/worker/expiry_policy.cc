#include "worker/expiry_policy.h"

namespace room_outbox::relay {

bool ExpiryPolicy::Expired(std::string_view event_type, int64_t created_at_ms, bool parked_before,
                           int64_t server_now_ms) const {
  if (parked_before) {
    return false;
  }
  const auto it = max_age_by_type_.find(event_type);
  if (it == max_age_by_type_.end() || it->second.count() <= 0) {
    return false;
  }
  // A created_at_ms ahead of the claim's now (never written by the hook, which takes the
  // server's now) gives a negative age: not expired.
  return server_now_ms - created_at_ms > it->second.count();
}

}  // namespace room_outbox::relay
