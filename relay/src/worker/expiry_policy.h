// ExpiryPolicy: whether a claimed row is too old to be sent ([tencent_im.max_age_by_type]).
//
// The rule, decided when the row's turn to be sent comes (RoomSender, at the front of its room):
// a row is expired when all of these hold:
//   - its event_type has a max age (a type not listed never expires; an empty table, the default,
//     expires nothing: every event is retried until it is sent);
//   - it was never parked before (OutboxRow::parked_before, parked_at_ms IS NOT NULL): a row an
//     operator requeued (`outbox-relay requeue` keeps parked_at_ms) is one the operator wants
//     sent, whatever its age, so an expiry applies to a row at most once;
//   - its age is above the max age: server_now_ms - created_at_ms > max age, both times the
//     database server's (created_at_ms written by the commit, server_now_ms read by the claim);
//     never the relay host's wall clock.
// An expired row is parked with last_error "expired" (RoundMarks::Expired) and not sent; its
// room's next row goes on in the same round. Rows of skip_event_types are delivered without a
// send before this rule is asked (RoomSender), so they never expire.
//
// Pure: plain values in, a decision out; no clock, no store. Thread-safe (immutable).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>

namespace room_outbox::relay {

// The last_error of an expired row, and the metric's and log line's word for it.
inline constexpr std::string_view kExpiredReason = "expired";

class ExpiryPolicy {
 public:
  // `max_age_by_type`: event_type -> max age (> 0; LoadConfig refuses other values, and a
  // non-positive one here never expires its type).
  explicit ExpiryPolicy(const std::map<std::string, std::chrono::milliseconds>& max_age_by_type)
      : max_age_by_type_(max_age_by_type.begin(), max_age_by_type.end()) {}

  // Whether a row of `event_type`, committed at `created_at_ms`, is expired at `server_now_ms`
  // (see the rule above). `parked_before`: the row was parked and requeued since.
  bool Expired(std::string_view event_type, int64_t created_at_ms, bool parked_before,
               int64_t server_now_ms) const;

  bool enabled() const { return !max_age_by_type_.empty(); }

 private:
  std::map<std::string, std::chrono::milliseconds, std::less<>> max_age_by_type_;
};

}  // namespace room_outbox::relay
