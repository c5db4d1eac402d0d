// The claim's scheduler, as a pure function: which of the rows a claim holds locked it leases,
// which it reschedules, which rooms it would like to read further, and when each room it took
// from the room schedule next needs a claim. No database here; the MariaDB store
// (store/mariadb_claim.cc) reads the inputs, calls PlanClaim and writes its result.
//
// A claim is read -> plan -> write, in one short transaction:
//   read   the server's now; with per-room order, the rows that arrived since the last claim put
//          on the room schedule (the listing), the rooms due on it (at most the batch, oldest due
//          first, locked: concurrent claims take different rooms), each room's first pending rows
//          from its head in id order (its part of the batch, plus one), and the due ones of that
//          part locked (SELECT ... FOR UPDATE SKIP LOCKED: the rows the claim holds); without it,
//          a window of due rows, locked;
//   plan   PlanClaim below;
//   write  leases and schedules, only for rows the claim holds locked, in ascending id order; then
//          each room's next due time (idle when it has no pending row).
// Because the read starts from the rooms due, its cost follows the rooms the claim serves, never
// the rooms backlogged, and a room is reached in the first claim after it comes due, whatever
// another room holds behind its own head.
//
// The batch (limit) counts messages with per-room order: a message is a room's first message (its
// recorded pack, else pack_events rows) or pack_events rows after it, so a room with several due
// events gets them in one message whatever the number of other rooms due. Without per-room order
// every row is a message of its own.
//
// Per-room order (the head rule): a row is leased only as part of the run that starts at its
// room's oldest pending row (the head) and goes on through consecutive pending rows the claim
// holds locked. A pending row the claim does not hold ends the run.
//
// Rows a room cannot send now are pushed behind the row that ends their run, unless that row is
// in flight (leased, its lease not run out: it is published or given back soon): they take its
// time, so they stop being due before it. A row is moved at most once per retry of its head, and
// at most a batch of rows per claim. When that row is due (a row past the room's part of the
// batch, a lease that ran out) the claim also reads the room from it and locks what it read
// (PlannedExtension), so the run can go on there in the same claim; when the batch has no room
// left for it, more_due is set. A row that waits is never taken early.
//
// Spread: the batch is shared out over the rooms one message per room per pass, in the order of
// each room's first locked row: every room's first message before any room's second, each room
// keeping the prefix of its run in id order. What is left of the batch after every room's share
// goes to the extensions, shared out the same way. With room_min_interval, when the first pass
// alone fills at least half the batch (many rooms are due), the batch holds one message per room: a
// room's second message would only wait out room_min_interval in the relay's round, so it gets the
// room's next interval slot and a later claim takes it. The relay's paced rooms (sent to less than
// room_min_interval ago) lease nothing, when the other rooms fill at least half the batch; their
// locked rows get slots from the end of their paced_for_ms on.
//
// Recorded packs: a room whose head recorded a pack (the head's pack_size, a pack whose send
// failed without a definite drop) has that pack as its first message (RoomRules::FirstMessageRows,
// whatever pack_events is now), so the resend holds the same rows. A claim that holds fewer of the
// pack's rows than recorded (a row another transaction holds locked, the pack's last rows parked
// by an operator) gives the room what it holds: the sender sends it as a smaller pack with another
// Random (PackRule), rather than stall the room.
//
// The run cut (pacing): a run holds at most run_cut_rows messages of sent rows (its first message
// as above, the others pack_events rows each; rows of skip_event_types are not counted); the room's
// other locked rows get interval slots one room_min_interval_ms apart after the run (rows of
// skip_event_types share the previous slot), so later claims pass over them and take other
// rooms' rows.
//
// The room schedule (RoomsDue): every room the claim took gets its next due time from what the
// claim saw of it: a room with a leased run is due when the lease ends (the marks of its messages
// bring it back to now); otherwise when its head next can go: its retry or interval slot, now when
// it is due and the batch had no room for it, or the end of the lease of whoever holds it in
// flight (this relay's own claims: their marks bring it back; another relay's or the hook's: no
// later than kRelayHeadRecheckMs / kHookHeadRecheckMs from now, since their marks may not). A
// room without pending rows goes idle: it stays on the schedule, never due until rows arrive.
//
// Pacing words, here and in the relay: room_min_interval (room_min_interval_ms as a number of
// milliseconds) is the least time between two sends to one room; pacing holds rooms to it; a
// paced room is one it holds back (PacedRoom, paced_for_ms); the run cut (run_cut_rows) is how
// many messages of one room a claim leases; an interval slot is the next_attempt_at_ms a claim
// gives a room's later row, one room_min_interval after the row before.
// The run also ends when the batch (limit) is full; the room's other locked rows keep their
// times (they are due: the next claim goes on with them).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "store/room_rules.h"

namespace room_outbox::relay {

// A pending row as the claim read it.
struct PlanRow {
  int64_t id = 0;
  std::string room_id;
  std::string event_type;
  int64_t next_attempt_at_ms = 0;
  // claim_token set: a claim or the hook's sync publish holds (or held) it. The row is in
  // flight while its lease lasts (next_attempt_at_ms > server now); after that it is due.
  bool leased = false;
  // room_outbox.pack_size: on a room's head, the pack it headed when that send failed without a
  // definite drop.
  uint32_t pack_size = 0;
  // The claim token of a leased row as the room prefix read it (empty otherwise): whose lease
  // holds the room's head in flight (RoomsDue).
  std::string claim_token;
};

// A room's head held in flight by a lease that is not this relay's: the room is looked at again
// this soon at the latest (another relay of an older release, or the hook's sync publish, marks
// the head without touching the room schedule). The hook's sync publish ends within its
// sync_publish_timeout; another relay's within publish_timeout.
inline constexpr int64_t kRelayHeadRecheckMs = 1000;
inline constexpr int64_t kHookHeadRecheckMs = 50;

struct PlanOptions {
  int64_t server_now_ms = 0;
  // Messages per claim with per-room order (rows without it: each row is its own message).
  size_t limit = 100;
  RoomRules rooms;  // ClaimOptions::rooms, as the claim was asked
  // How long a lease holds its rows: a room with a leased run is due at server_now_ms + lease_ms.
  int64_t lease_ms = 0;
  // The start of this relay's claim tokens (ClaimOptions::token_prefix; empty: none is known as
  // its own): a head in flight under such a token is marked by this relay, which brings its room
  // back then.
  std::string own_token_prefix;
  // With room_min_interval: the relay's paced rooms and their paced_for_ms (ClaimOptions).
  // None of their rows is leased; their locked rows get interval slots from server_now_ms +
  // paced_for_ms on.
  std::map<std::string, int64_t, std::less<>> paced_rooms;
};

struct PlanInput {
  // Rows this claim holds locked (the heads' runs or the window, plus the rows an extension
  // locked), any order.
  std::vector<PlanRow> locked;
  // Per room of `locked`: the room's first pending rows in ascending id order (as read, locked
  // or not; a prefix of the room, not all of it).
  std::map<std::string, std::vector<PlanRow>> pending;
  // Rooms (per-room order) or rows (without it) the first read returned: more_due when it
  // reached limit.
  size_t window_rows = 0;
  // Per-room order: the rooms the claim took from the room schedule (locked), each of which gets
  // its next due time or leaves the schedule (RoomsDue), whether or not it had rows to read.
  std::vector<std::string> rooms;
};

struct PlannedSchedule {
  int64_t id = 0;
  int64_t next_attempt_at_ms = 0;
};

struct PlannedPacedRoom {
  std::string room_id;
  uint64_t rows_scheduled = 0;
  int64_t last_slot_ms = 0;  // server time; 0 when none was scheduled
};

// A room whose run ends at a due row the claim does not hold: reading (and locking) the room's
// pending rows after `after_id`, at most `rows` of them, lets the run go on from there.
struct PlannedExtension {
  std::string room_id;
  int64_t after_id = 0;
  size_t rows = 0;
};

// When a room of the schedule next needs a claim (server time).
struct PlannedRoomDue {
  std::string room_id;
  int64_t due_at_ms = 0;
};

struct ClaimPlan {
  std::vector<int64_t> lease;                 // ascending ids
  std::vector<PlannedSchedule> schedule;      // ascending ids, each row at most once
  std::vector<PlannedPacedRoom> paced_rooms;  // rooms whose rows got interval slots
  std::vector<PlannedExtension> extensions;   // empty when the runs cannot go on
  std::vector<PlannedRoomDue> rooms_due;      // ascending room_id: PlanInput::rooms with rows
  std::vector<std::string> rooms_idle;        // ascending: PlanInput::rooms without pending rows
  bool more_due = false;
};

[[nodiscard]] ClaimPlan PlanClaim(const PlanOptions& options, const PlanInput& input);

}  // namespace room_outbox::relay
