#include "claim_plan.h"

#include <algorithm>
#include <unordered_set>
#include <utility>

namespace room_outbox {
namespace {

// One room of the claim: its locked rows (ascending id) and the prefix of its pending rows.
struct Room {
  const std::string* room_id = nullptr;
  std::vector<const PlanRow*> locked;
  const std::vector<PlanRow>* pending = nullptr;
};

// Rooms in the order of their first locked row, so the batch is shared out deterministically.
std::vector<Room> GroupByRoom(const PlanInput& input) {
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
      rooms.push_back(Room{&row->room_id, {}, pending == input.pending.end() ? &kNone
                                                                              : &pending->second});
    }
    Room& room = rooms[it->second];
    if (room.locked.empty() || room.locked.back()->id != row->id) room.locked.push_back(row);
  }
  return rooms;
}

bool InFlight(const PlanOptions& options, const PlanRow& row) {
  return row.leased && row.next_attempt_at_ms > options.server_now_ms;
}

bool IsPaced(const PlanOptions& options, const std::string& event_type) {
  return options.unpaced_event_types.find(event_type) == options.unpaced_event_types.end();
}

// How a room's run from its head ended.
struct Run {
  size_t kept = 0;   // rows of the pending prefix kept (leased)
  size_t paced = 0;  // of which are sent (not of an unpaced type)
  bool cut = false;  // max_rows_per_room reached
  bool full = false;  // the batch is full
  const PlanRow* blocker = nullptr;  // the first pending row not held, when read
};

Run WalkRun(const PlanOptions& options, const Room& room,
            const std::unordered_set<int64_t>& held, size_t& batch_left) {
  const size_t cap = options.room_pace_ms > 0 ? options.max_rows_per_room : 0;
  Run run;
  for (const PlanRow& row : *room.pending) {
    if (held.count(row.id) == 0) {
      run.blocker = &row;
      break;
    }
    const bool paced = IsPaced(options, row.event_type);
    if (cap > 0 && paced && run.paced == cap) {
      run.cut = true;
      break;
    }
    if (batch_left == 0) {
      run.full = true;
      break;
    }
    ++run.kept;
    if (paced) ++run.paced;
    --batch_left;
  }
  return run;
}

// The locked rows of a cut (or batch-full) room after its run get the slots after the run, one
// room_pace_ms apart; rows of unpaced types share the previous slot. A row only ever moves later.
void ScheduleAfterRun(const PlanOptions& options, const Room& room, const Run& run,
                      const std::vector<const PlanRow*>& rest, ClaimPlan& plan) {
  const int64_t pace = options.room_pace_ms > 0 ? options.room_pace_ms : 0;
  int64_t slot = options.server_now_ms + static_cast<int64_t>(std::max<size_t>(run.paced, 1) - 1) * pace;
  PlannedPacedRoom paced{*room.room_id, 0, 0};
  for (const PlanRow* row : rest) {
    if (IsPaced(options, row->event_type)) slot += pace;
    if (slot > options.server_now_ms && slot > row->next_attempt_at_ms) {
      plan.schedule.push_back(PlannedSchedule{row->id, slot});
      ++paced.rows_scheduled;
      paced.last_slot_ms = slot;
    }
  }
  if (run.cut) plan.paced_rooms.push_back(std::move(paced));
}

// Rows behind a row the claim does not hold (and that is not in flight: a failed head before
// its retry, a due head beyond the window or held by a claim in progress, a lease that ran out,
// a pace slot) take that row's time, so they sort behind it and stop filling windows before it
// (a failed head's rows stop being due until its retry). When that row is due the plan also asks
// to read the room from it, so the run can start there in this claim. A row that waits is never
// taken early.
void PushBehind(const PlanOptions& options, const Room& room, const Run& run, size_t& batch_left,
                const std::vector<const PlanRow*>& rest, ClaimPlan& plan) {
  const PlanRow& blocker = *run.blocker;
  const bool due = blocker.next_attempt_at_ms <= options.server_now_ms;
  if (due && batch_left > 0) {
    // That row and as many as the window holds of the room behind it: what the batch can use.
    const size_t cap = options.room_pace_ms > 0 ? options.max_rows_per_room : 0;
    const size_t room_cap = cap > 0 ? cap - run.paced : batch_left;
    const size_t allowance = std::min({rest.size() + 1, room_cap, batch_left});
    const int64_t after_id = run.kept > 0 ? (*room.pending)[run.kept - 1].id : blocker.id - 1;
    plan.extensions.push_back(PlannedExtension{*room.room_id, after_id, allowance});
    batch_left -= allowance;
  }
  for (const PlanRow* row : rest) {
    if (row->next_attempt_at_ms < blocker.next_attempt_at_ms) {
      plan.schedule.push_back(PlannedSchedule{row->id, blocker.next_attempt_at_ms});
    }
  }
}

void PlanRoom(const PlanOptions& options, const Room& room, size_t& batch_left, ClaimPlan& plan) {
  std::unordered_set<int64_t> held;
  for (const PlanRow* row : room.locked) held.insert(row->id);
  const Run run = WalkRun(options, room, held, batch_left);
  std::unordered_set<int64_t> kept;
  for (size_t k = 0; k < run.kept; ++k) {
    kept.insert((*room.pending)[k].id);
    plan.lease.push_back((*room.pending)[k].id);
  }
  std::vector<const PlanRow*> rest;
  for (const PlanRow* row : room.locked) {
    if (kept.count(row->id) == 0) rest.push_back(row);
  }
  if (run.cut || run.full) {
    plan.more_due = true;
    ScheduleAfterRun(options, room, run, rest, plan);
  } else if (run.blocker != nullptr && !InFlight(options, *run.blocker)) {
    PushBehind(options, room, run, batch_left, rest, plan);
  }
  // Otherwise the run ends at a row in flight (published or given back soon); the rest waits for
  // it as it is.
}

}  // namespace

ClaimPlan PlanClaim(const PlanOptions& options, const PlanInput& input) {
  ClaimPlan plan;
  plan.more_due = input.window_rows >= options.limit;
  if (!options.per_room_order) {
    for (const PlanRow& row : input.locked) plan.lease.push_back(row.id);
    std::sort(plan.lease.begin(), plan.lease.end());
    plan.lease.erase(std::unique(plan.lease.begin(), plan.lease.end()), plan.lease.end());
    if (plan.lease.size() > options.limit) plan.lease.resize(options.limit);
    return plan;
  }
  size_t batch_left = options.limit;
  for (const Room& room : GroupByRoom(input)) {
    PlanRoom(options, room, batch_left, plan);
  }
  std::sort(plan.lease.begin(), plan.lease.end());
  std::sort(plan.schedule.begin(), plan.schedule.end(),
            [](const PlannedSchedule& a, const PlannedSchedule& b) { return a.id < b.id; });
  return plan;
}

}  // namespace room_outbox
