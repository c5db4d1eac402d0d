// The division of an IM app's request budget among the processes that send to it (the members
// of room_outbox_im_member). Pure: plain values in, a share out; no clock and no database.
//
// Every beat each member reads the app's members and computes its own share the same way, so
// the shares of one reading add up to the app's limit:
//   - live: a member whose beat is at most two beat intervals old (server clock); older ones
//     have stopped beating and no longer count.
//   - floor: kFloorFraction of the limit is split equally among the live members, so a member
//     that reported no demand and becomes busy has tokens at once, and more after its next beat.
//   - by demand: the rest goes to the members by their demand, smallest first, none more than
//     an equal part of what is left (max-min fair): busy members split what idle ones leave.
//   - what no demand takes is split equally among all live members (headroom).
//   - never more than the limit minus the shares the other live members wrote with their last
//     beat: a newcomer, or a member whose share grows, waits until the others have given way
//     (their next beat), so the members' shares at any time add up to the limit at most.
// A member missing from the reading (its first beat not in yet) counts itself with no demand.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace room_outbox::core {

struct MemberBeat {
  std::string member_id;
  int64_t beat_ms = 0;  // server clock
  int64_t demand = 0;   // requests per second
  int64_t share = 0;    // requests per second it takes now (rounded up)
};

struct AppShare {
  double requests_per_second = 0;  // this member's share (at least kMinShare)
  int live_members = 0;            // itself included
  // Below its fair part because the others have not given way yet: worth reading again soon.
  bool waiting_for_others = false;
};

// The part of the limit split equally among the live members whatever their demand.
inline constexpr double kFloorFraction = 0.1;

// The least share a member takes, whatever the others hold.
inline constexpr double kMinShare = 1.0;

// A member with a beat at least `now_ms - 2 * beat_interval_ms` is live.
bool IsLive(const MemberBeat& member, int64_t now_ms, int64_t beat_interval_ms);

// `self`'s share of `app_limit` (> 0) among the live `members` at `now_ms`.
AppShare SplitAppBudget(const std::vector<MemberBeat>& members, std::string_view self,
                        double app_limit, int64_t now_ms, int64_t beat_interval_ms);

// The demand a member reports for a beat of `beat_ms` in which it took `acquired` tokens and
// `waited` times found none: the rate it sent at, or `most` (the app's limit, or the process's
// own cap when lower) when it waited: it could use more than it had. Never more than `most`.
int64_t ReportedDemand(uint64_t acquired, uint64_t waited, int64_t beat_ms, double most);

// The share of a member that cannot read the table: its last share, never more; before any
// reading, the limit divided by `assumed_members` (>= 1).
double FallbackShare(std::optional<double> last_share, double app_limit, int assumed_members);

}  // namespace room_outbox::core
