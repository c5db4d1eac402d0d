#include "store/claim_plan.h"

#include <algorithm>
#include <set>
#include <string_view>
#include <unordered_set>
#include <utility>

#include "core/claim_token.h"

namespace room_outbox::relay {
namespace {

// One room of the claim: its locked rows (ascending id) and the prefix of its pending rows.
struct Room {
  const std::string* room_id = nullptr;
  std::vector<const PlanRow*> locked;
  const std::vector<PlanRow>* pending = nullptr;
  size_t first_message = 1;  // rows of its first message (RoomRules::FirstMessageRows)
};

// The head's recorded pack, when the claim holds the head locked: only locked rows carry
// pack_size.
uint32_t HeadPackSize(const Room& room) {
  if (room.pending->empty() || room.locked.empty()) return 0;
  const PlanRow* head = room.locked.front();
  return head->id == room.pending->front().id ? head->pack_size : 0;
}

// Rooms in the order of their first locked row, so the batch is shared out deterministically.
std::vector<Room> GroupByRoom(const PlanOptions& options, const PlanInput& input) {
  std::vector<const PlanRow*> rows;
  rows.reserve(input.locked.size());
  for (const PlanRow& row : input.locked) rows.push_back(&row);
  std::sort(rows.begin(), rows.end(),
            [](const PlanRow* a, const PlanRow* b) { return a->id < b->id; });
  static const std::vector<PlanRow> kNone;
  std::map<std::string_view, size_t> index;
  std::vector<Room> rooms;
  for (const PlanRow* row : rows) {
    auto [it, inserted] = index.try_emplace(row->room_id, rooms.size());
    if (inserted) {
      auto pending = input.pending.find(row->room_id);
      rooms.push_back(
          Room{&row->room_id, {}, pending == input.pending.end() ? &kNone : &pending->second});
    }
    Room& room = rooms[it->second];
    if (room.locked.empty() || room.locked.back()->id != row->id) room.locked.push_back(row);
  }
  for (Room& room : rooms) {
    const uint32_t recorded = HeadPackSize(room);
    room.first_message = options.rooms.FirstMessageRows(recorded);
  }
  return rooms;
}

bool InFlight(const PlanOptions& options, const PlanRow& row) {
  return row.leased && row.next_attempt_at_ms > options.server_now_ms;
}

// How far a room's run from its head may go in this claim, before the batch is shared out.
struct Run {
  size_t avail = 0;  // rows of the pending prefix the run may lease (held, within the cut)
  bool cut = false;  // run_cut_rows reached with more held rows after it
  const PlanRow* blocker = nullptr;  // the first pending row not held, when read
};

// How long room_min_interval holds the room back before it may be sent to again (0: it may now).
int64_t PacedForMs(const PlanOptions& options, const Room& room) {
  if (options.rooms.room_min_interval_ms <= 0) return 0;
  auto paced = options.paced_rooms.find(*room.room_id);
  return paced == options.paced_rooms.end() ? 0 : paced->second;
}

// The run from the room's head through the rows the claim holds, within the cut.
Run WalkHeldRun(const PlanOptions& options, const Room& room) {
  std::unordered_set<int64_t> held;
  for (const PlanRow* row : room.locked) held.insert(row->id);
  const size_t cut_rows = options.rooms.CutRows(room.first_message);
  Run run;
  size_t sent_rows = 0;
  for (const PlanRow& row : *room.pending) {
    if (held.count(row.id) == 0) {
      run.blocker = &row;
      break;
    }
    const bool sent = options.rooms.Sends(row.event_type);
    if (cut_rows > 0 && sent && sent_rows == cut_rows) {
      run.cut = true;
      break;
    }
    ++run.avail;
    if (sent) ++sent_rows;
  }
  return run;
}

// Paced rooms lease nothing, but only when the rooms that may be sent to now fill at least
// half the batch with their first rows: with few rooms due (a busy room alone) the round would
// have nothing else to send, and it waits out room_min_interval itself.
void HoldPacedRooms(const PlanOptions& options, const std::vector<Room>& rooms,
                    std::vector<Run>& runs) {
  size_t ready = 0;
  for (size_t i = 0; i < rooms.size(); ++i) {
    if (runs[i].avail > 0 && PacedForMs(options, rooms[i]) == 0) ++ready;
  }
  if (2 * ready < options.limit) return;
  for (size_t i = 0; i < rooms.size(); ++i) {
    if (runs[i].avail > 0 && PacedForMs(options, rooms[i]) > 0) {
      // Nothing leased; its locked rows get slots after its paced_for_ms. (A run that cannot start,
      // e.g. behind a row in flight, is left as it is.)
      runs[i] = Run{};
      runs[i].cut = true;
    }
  }
}

// What a room may take of the batch: up to `rows` rows, its first message `first` rows (each
// later one `unit`, pack_events).
struct Want {
  size_t rows = 0;
  size_t first = 1;
};

// Shares `messages_left` out over rooms that may take up to wants[i].rows rows each, one message
// per room per pass (every room's first message before anyone's second), in room order: the first
// pass gives each room its first message (want.first rows, or what it holds of them), later passes
// `unit` rows (pack_events). Returns the shares in rows and lowers messages_left by the messages
// given.
std::vector<size_t> ShareOut(const std::vector<Want>& wants, size_t& messages_left, size_t unit) {
  std::vector<size_t> shares(wants.size(), 0);
  std::vector<size_t> active;
  for (size_t i = 0; i < wants.size() && messages_left > 0; ++i) {
    if (wants[i].rows == 0) continue;
    shares[i] = std::min(std::max<size_t>(wants[i].first, 1), wants[i].rows);
    --messages_left;
    if (shares[i] < wants[i].rows) active.push_back(i);
  }
  while (messages_left > 0 && !active.empty()) {
    std::vector<size_t> next;
    for (size_t i : active) {
      if (messages_left == 0) break;
      shares[i] += std::min(std::max<size_t>(unit, 1), wants[i].rows - shares[i]);
      --messages_left;
      if (shares[i] < wants[i].rows) next.push_back(i);
    }
    active = std::move(next);
  }
  return shares;
}

// The rooms' shares of the batch. With room_min_interval, one message per room when that fills at
// least half the batch (see claim_plan.h); else every pass the batch has room for.
std::vector<size_t> ShareBatch(const PlanOptions& options, const std::vector<Want>& wants,
                               size_t& batch_left) {
  if (options.rooms.room_min_interval_ms > 0) {
    std::vector<Want> firsts = wants;
    for (Want& want : firsts) want.rows = std::min(want.rows, want.first);
    size_t left = batch_left;
    std::vector<size_t> shares = ShareOut(firsts, left, options.rooms.PackEvents());
    if (2 * (batch_left - left) >= options.limit) {
      batch_left = left;
      return shares;
    }
  }
  return ShareOut(wants, batch_left, options.rooms.PackEvents());
}

size_t SentAmong(const PlanOptions& options, const Room& room, size_t rows) {
  size_t sent = 0;
  for (size_t k = 0; k < rows; ++k) {
    if (options.rooms.Sends((*room.pending)[k].event_type)) ++sent;
  }
  return sent;
}

// The messages of a run of `sent` sent rows whose first message holds up to `first` of them.
size_t RunMessages(size_t sent, size_t first, size_t pack) {
  if (sent <= first) return 1;
  return 1 + (sent - first + pack - 1) / pack;
}

// The locked rows of a cut (or batch-full) room after its run get the interval slots after the
// run, one room_min_interval_ms apart, one message per slot: pack_events sent rows, or the room's
// first message (its recorded pack) when the run leased nothing; rows of skip_event_types share
// the previous slot. A row only ever moves later.
// A paced room's first slot is at the end of its paced_for_ms.
void ScheduleAfterRun(const PlanOptions& options, const Room& room, size_t share, size_t run_sent,
                      bool cut, const std::vector<const PlanRow*>& rest, ClaimPlan& plan) {
  const int64_t interval = std::max<int64_t>(options.rooms.room_min_interval_ms, 0);
  const int64_t paced_for_ms = PacedForMs(options, room);
  const size_t pack = options.rooms.PackEvents();
  // The run's messages take the slots from now on; the rest take a new slot every message.
  const auto run_slots = static_cast<int64_t>(RunMessages(run_sent, room.first_message, pack) - 1);
  int64_t slot = paced_for_ms > 0 ? options.server_now_ms + paced_for_ms - interval
                                  : options.server_now_ms + run_slots * interval;
  PlannedPacedRoom paced{*room.room_id, 0, 0};
  // The run's last message is formed: the rest start a new one.
  size_t in_message = 0;
  size_t message_rows = 0;
  bool head_message = share == 0;
  for (const PlanRow* row : rest) {
    if (options.rooms.Sends(row->event_type)) {
      if (in_message == message_rows) {
        slot += interval;
        in_message = 0;
        message_rows = head_message ? room.first_message : pack;
        head_message = false;
      }
      ++in_message;
    }
    if (slot > options.server_now_ms && slot > row->next_attempt_at_ms) {
      plan.schedule.push_back(PlannedSchedule{row->id, slot});
      ++paced.rows_scheduled;
      paced.last_slot_ms = slot;
    }
  }
  // A room whose rows got interval slots is paced, whether the cut or the batch ended its run:
  // the relay polls every room_min_interval while they come due.
  if (cut || paced.rows_scheduled > 0) plan.paced_rooms.push_back(std::move(paced));
}

// Rows behind a row the claim does not hold (and that is not in flight: a failed head before
// its retry, a due head beyond the window or held by a claim in progress, a lease that ran out,
// an interval slot) take that row's time, so they sort behind it and stop filling windows before it
// (a failed head's rows stop being due until its retry). A row that waits is never taken early.
void PushBehind(const PlanRow& blocker, const std::vector<const PlanRow*>& rest, ClaimPlan& plan) {
  for (const PlanRow* row : rest) {
    if (row->next_attempt_at_ms < blocker.next_attempt_at_ms) {
      plan.schedule.push_back(PlannedSchedule{row->id, blocker.next_attempt_at_ms});
    }
  }
}

// One room after the batch was shared out: what it leases, and what its other rows do.
struct RoomPlan {
  const Room* room = nullptr;
  Run run;
  size_t share = 0;
  size_t run_sent = 0;               // rows of the share that are sent
  std::vector<const PlanRow*> rest;  // locked rows not leased, ascending id
};

RoomPlan LeaseShare(const PlanOptions& options, const Room& room, const Run& run, size_t share,
                    ClaimPlan& plan) {
  RoomPlan out{&room, run, share, SentAmong(options, room, share), {}};
  std::unordered_set<int64_t> kept;
  for (size_t k = 0; k < share; ++k) {
    kept.insert((*room.pending)[k].id);
    plan.lease.push_back((*room.pending)[k].id);
  }
  for (const PlanRow* row : room.locked) {
    if (kept.count(row->id) == 0) out.rest.push_back(row);
  }
  return out;
}

// Rooms whose run ends at a due row the claim does not hold: the batch left after every room's
// share is shared out again over them (one message per room per pass), and each asks to read the
// room from that row, so the run can start there in this claim.
void Extend(const PlanOptions& options, const std::vector<RoomPlan>& rooms,
            const std::vector<size_t>& blocked, size_t& batch_left, ClaimPlan& plan) {
  const size_t unit = options.rooms.PackEvents();
  std::vector<Want> wants;
  for (size_t i : blocked) {
    const RoomPlan& r = rooms[i];
    const size_t cut_rows = options.rooms.CutRows(r.room->first_message);
    const bool due = r.run.blocker->next_attempt_at_ms <= options.server_now_ms;
    // That row and the room's rows after it, as many as the cut (or the batch) allows: the claim
    // read only the room's part of the batch, so more of it may well be due.
    const size_t left =
        cut_rows > 0 ? cut_rows - std::min(cut_rows, r.run_sent) : options.limit * unit;
    wants.push_back(Want{due ? left : 0, unit});
    // A run the cut ended at a due row: the room has more to send, in a later claim.
    if (due && left == 0) plan.more_due = true;
  }
  const std::vector<size_t> shares = ShareOut(wants, batch_left, unit);
  for (size_t k = 0; k < blocked.size(); ++k) {
    // A due row the batch had no room for: the next claim goes on with it.
    if (shares[k] < wants[k].rows) plan.more_due = true;
    if (shares[k] == 0) continue;
    const RoomPlan& r = rooms[blocked[k]];
    const int64_t after_id =
        r.share > 0 ? (*r.room->pending)[r.share - 1].id : r.run.blocker->id - 1;
    plan.extensions.push_back(PlannedExtension{*r.room->room_id, after_id, shares[k]});
  }
}

void PlanRooms(const PlanOptions& options, const PlanInput& input, ClaimPlan& plan) {
  const std::vector<Room> rooms = GroupByRoom(options, input);
  std::vector<Run> runs;
  std::vector<Want> wants;
  for (const Room& room : rooms) runs.push_back(WalkHeldRun(options, room));
  HoldPacedRooms(options, rooms, runs);
  for (size_t i = 0; i < rooms.size(); ++i) {
    wants.push_back(Want{runs[i].avail, rooms[i].first_message});
  }
  size_t batch_left = options.limit;
  const std::vector<size_t> shares = ShareBatch(options, wants, batch_left);
  std::vector<RoomPlan> planned;
  std::vector<size_t> blocked;  // rooms whose run ends at a row not held and not in flight
  for (size_t i = 0; i < rooms.size(); ++i) {
    planned.push_back(LeaseShare(options, rooms[i], runs[i], shares[i], plan));
    const RoomPlan& r = planned.back();
    const bool full = r.share < r.run.avail;
    if (full || r.run.cut) {
      plan.more_due = true;
      ScheduleAfterRun(options, rooms[i], r.share, r.run_sent, r.run.cut && !full, r.rest, plan);
    } else if (r.run.blocker != nullptr && !InFlight(options, *r.run.blocker)) {
      PushBehind(*r.run.blocker, r.rest, plan);
      blocked.push_back(i);
    }
    // Otherwise the run ends at a row in flight (published or given back soon); the rest waits
    // for it as it is.
  }
  Extend(options, planned, blocked, batch_left, plan);
}

// When a room whose head is held in flight by `token` (its lease ending at `lease_end`) should be
// looked at again: this relay's own claims bring it back with their marks; another relay's or the
// hook's may not, so no later than their recheck time.
int64_t HeldHeadDue(const PlanOptions& options, const std::string& token, int64_t lease_end) {
  const std::string_view own = options.own_token_prefix;
  if (!own.empty() && std::string_view(token).substr(0, own.size()) == own) return lease_end;
  const int64_t recheck = core::IsRelayClaimToken(token) ? kRelayHeadRecheckMs : kHookHeadRecheckMs;
  return std::min(lease_end, options.server_now_ms + recheck);
}

// The head's next_attempt_at_ms once the plan is written (plan.schedule sorted by id).
int64_t PlannedTime(const ClaimPlan& plan, const PlanRow& row) {
  auto it = std::lower_bound(
      plan.schedule.begin(), plan.schedule.end(), row.id,
      [](const PlannedSchedule& scheduled, int64_t id) { return scheduled.id < id; });
  return it != plan.schedule.end() && it->id == row.id ? it->next_attempt_at_ms
                                                       : row.next_attempt_at_ms;
}

// Each room the claim took from the schedule: when it next needs a claim, or idle when it has no
// pending row (claim_plan.h, "The room schedule").
void RoomsDue(const PlanOptions& options, const PlanInput& input, ClaimPlan& plan) {
  std::set<std::string_view> leased;
  for (const PlanRow& row : input.locked) {
    if (std::binary_search(plan.lease.begin(), plan.lease.end(), row.id))
      leased.insert(row.room_id);
  }
  std::set<std::string_view> rooms(input.rooms.begin(), input.rooms.end());
  const int64_t now = options.server_now_ms;
  for (std::string_view room : rooms) {
    auto pending = input.pending.find(std::string(room));
    if (pending == input.pending.end() || pending->second.empty()) {
      plan.rooms_idle.emplace_back(room);
      continue;
    }
    const PlanRow& head = pending->second.front();
    int64_t due = 0;
    if (leased.count(room) != 0) {
      due = now + options.lease_ms;
    } else if (head.leased && head.next_attempt_at_ms > now) {
      due = HeldHeadDue(options, head.claim_token, head.next_attempt_at_ms);
    } else {
      due = std::max(PlannedTime(plan, head), now);
    }
    plan.rooms_due.push_back(PlannedRoomDue{std::string(room), due});
  }
}

}  // namespace

ClaimPlan PlanClaim(const PlanOptions& options, const PlanInput& input) {
  ClaimPlan plan;
  plan.more_due = input.window_rows >= options.limit;
  if (!options.rooms.per_room_order) {
    for (const PlanRow& row : input.locked) plan.lease.push_back(row.id);
    std::sort(plan.lease.begin(), plan.lease.end());
    plan.lease.erase(std::unique(plan.lease.begin(), plan.lease.end()), plan.lease.end());
    if (plan.lease.size() > options.limit) plan.lease.resize(options.limit);
    return plan;
  }
  PlanRooms(options, input, plan);
  std::sort(plan.lease.begin(), plan.lease.end());
  std::sort(plan.schedule.begin(), plan.schedule.end(),
            [](const PlannedSchedule& a, const PlannedSchedule& b) { return a.id < b.id; });
  RoomsDue(options, input, plan);
  return plan;
}

}  // namespace room_outbox::relay
