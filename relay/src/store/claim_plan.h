// The claim's scheduler, as a pure function: which of the rows a claim holds locked it leases,
// which it reschedules, and which rooms it would like to read further. No database here; the
// MariaDB store (mysql/mariadb_claim.cc) reads the inputs, calls PlanClaim and writes its result.
//
// A claim is read -> plan -> write, in one short transaction:
//   read   the server's now; with per-room order, the rooms whose head is due (at most the batch,
//          oldest due first), each room's first pending rows from its head in id order (its part
//          of the batch, plus one), and the due ones of that part locked (SELECT ... FOR UPDATE
//          SKIP LOCKED: the rows the claim holds); without it, a window of due rows, locked;
//   plan   PlanClaim below;
//   write  leases and schedules, only for rows the claim holds locked, in ascending id order.
// Because the read starts from the heads, a room is reached in the first claim after its head
// comes due, whatever another room holds behind its own head.
//
// Per-room order (the head rule): a row is leased only as part of the run that starts at its
// room's oldest pending row (the head) and goes on through consecutive pending rows the claim
// holds locked. A pending row the claim does not hold ends the run.
//
// Rows a room cannot send now are pushed behind the row that ends their run, unless that row is
// in flight (leased, its lease not run out: it is published or given back soon): they take its
// time, so they stop being due before it (behind a failed head, until its retry: the "any due"
// probe and the next due time then see the head's retry, not its backlog). A row is moved at
// most once per retry of its head, and at most a batch of rows per claim. When that row is due
// (a row past the room's part of the batch, a lease that ran out) the claim also reads the room
// from it and locks what it read (PlannedExtension), so the run can go on there in the same claim;
// when the batch has no room left for it, more_due is set. A row that waits is never taken early.
//
// Spread: the batch (limit) is shared out over the rooms one message per room per pass, in the
// order of each room's first locked row: every room's first message before any room's second,
// each room keeping the prefix of its run in id order. So with many due rooms a batch holds as few
// rows of one room as the batch allows (and a room's second message seldom waits out
// room_min_interval in the same round). What is left of the batch after every room's share goes to
// the extensions, shared out the same way. With room_min_interval, when the first pass alone fills
// at least half the batch (many rooms are due), the batch holds one message per room: a room's
// second message would only wait out room_min_interval in the relay's round, so it gets the room's
// next interval slot and a later claim takes it. The relay's paced rooms (sent to less than
// room_min_interval ago) lease nothing, when the other rooms fill at least half the batch; their
// locked rows get slots from the end of their paced_for_ms on.
//
// Recorded packs: a message is pack_events rows, but a room whose head recorded a pack (the head's
// pack_size, a pack whose send failed without a definite drop) has that pack as its first message
// (RoomRules::FirstMessageRows, whatever pack_events is now), so the resend holds the same rows.
// The room gets it whole or, when the batch left has no room for it, nothing in this claim
// (more_due: a later claim, in which the room comes earlier, starts with it). A claim that holds
// fewer of the pack's rows than recorded (a row another transaction holds locked, the pack's last
// rows parked by an operator, a batch smaller than the pack) gives the room what it holds: the
// sender sends it as a smaller pack with another Random (PackRule), rather than stall the room.
//
// The run cut (pacing): a run holds at most run_cut_rows messages of sent rows (its first message
// as above, the others pack_events rows each; rows of skip_event_types are not counted); the room's
// other locked rows get interval slots one room_min_interval_ms apart after the run (rows of
// skip_event_types share the previous slot), so later claims pass over them and take other
// rooms' rows.
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
  // room_outbox.pack_size of a locked row (0 in the pending prefix): on a room's head, the pack it
  // headed when that send failed without a definite drop.
  uint32_t pack_size = 0;
};

struct PlanOptions {
  int64_t server_now_ms = 0;
  size_t limit = 100;  // rows per claim
  RoomRules rooms;     // ClaimOptions::rooms, as the claim was asked
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
  // Heads (per-room order) or rows (without it) the first read returned: more_due when it
  // reached limit.
  size_t window_rows = 0;
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

struct ClaimPlan {
  std::vector<int64_t> lease;                 // ascending ids
  std::vector<PlannedSchedule> schedule;      // ascending ids, each row at most once
  std::vector<PlannedPacedRoom> paced_rooms;  // rooms whose rows got interval slots
  std::vector<PlannedExtension> extensions;   // empty when the runs cannot go on
  bool more_due = false;
};

[[nodiscard]] ClaimPlan PlanClaim(const PlanOptions& options, const PlanInput& input);

}  // namespace room_outbox::relay
