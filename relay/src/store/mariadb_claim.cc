// MariaDbRelayStore::ClaimDue: read -> plan -> write in one short transaction (claim_plan.h). Every
// statement's text and the index it relies on are in outbox_sql.h.
//
// With per-room order the claim works from the room schedule (schema 009): it first lists the rows
// that arrived since the last claim (puts their rooms on the schedule, due now), then takes the
// rooms due (at most the batch, oldest due first, locked), reads each room's first rows from its
// head (its part of the batch plus one), locks the due ones, plans, and writes the leases, the
// slots and each room's next due time. So a room is reached as soon as it is due, whatever another
// room's backlog, and the cost of a claim follows the rows arriving and the rooms it serves, not
// the rooms backlogged.
#include <algorithm>
#include <map>
#include <utility>

#include "core/mysql/mysql_error.h"
#include "core/mysql/outbox_sql.h"
#include "store/claim_plan.h"
#include "store/claim_reads.h"
#include "store/claim_writes.h"
#include "store/mariadb_relay_store.h"

namespace room_outbox::relay {
namespace {

using claim_sql::ListArrivals;
using claim_sql::LockedRow;
using claim_sql::LockRows;
using claim_sql::ReadRooms;
using claim_sql::RoomRange;
using claim_sql::SelectDueRooms;
using claim_sql::SelectWindow;
using claim_sql::ServerNow;
using claim_sql::WritePlan;

// A deadlock or lock wait timeout rolls the claim back; it is run again at once, this often.
constexpr int kClaimAttempts = 3;

// The most rows one claim lists: a batch of messages' worth (batch_size x pack_max_events), at
// least kMinListRows so arrivals of one-event messages are listed faster than they come, at most
// kMaxListRows so a claim after an outage's backlog arrived stays short.
constexpr size_t kMinListRows = 500;
constexpr size_t kMaxListRows = 5000;

size_t ListLimit(const ClaimOptions& options) {
  return std::clamp(options.limit * options.rooms.PackEvents(), kMinListRows, kMaxListRows);
}

PlanOptions ToPlanOptions(const ClaimOptions& options, int64_t server_now_ms) {
  PlanOptions plan;
  plan.server_now_ms = server_now_ms;
  plan.limit = options.limit;
  plan.rooms = options.rooms;
  plan.lease_ms = options.lease_ms;
  plan.own_token_prefix = options.token_prefix;
  for (const PacedRoom& room : options.paced_rooms) {
    if (room.paced_for_ms > 0) plan.paced_rooms[room.room_id] = room.paced_for_ms;
  }
  return plan;
}

// The plan's extensions: reads the rooms from the due rows that ended their runs (non-locking),
// then locks what it read. The rows the lock skipped stay out of `locked`, which ends the runs
// there.
core::Result<void> Extend(core::MariaDbConnection& conn, int64_t now_ms, const ClaimPlan& plan,
                          PlanInput& input, std::vector<LockedRow>& locked) {
  std::vector<RoomRange> ranges;
  for (const PlannedExtension& e : plan.extensions) {
    ranges.push_back(RoomRange{e.room_id, e.after_id, e.rows});
  }
  std::map<std::string, std::vector<PlanRow>> further;
  if (auto read = ReadRooms(conn, ranges, true, further); !read) return read;
  std::vector<int64_t> ids;
  for (auto& [room, rows] : further) {
    std::vector<PlanRow>& known = input.pending[room];
    for (PlanRow& row : rows) {
      if (row.next_attempt_at_ms <= now_ms) ids.push_back(row.id);
      // The prefix read already holds the first of them (the row that ended the run).
      if (known.empty() || row.id > known.back().id) known.push_back(std::move(row));
    }
  }
  std::sort(ids.begin(), ids.end());
  auto more = LockRows(conn, now_ms, ids);
  if (!more) return core::Fail(more.error());
  for (LockedRow& row : *more) {
    input.locked.push_back(row.plan);
    locked.push_back(std::move(row));
  }
  return {};
}

// Without per-room order: the window of due rows, locked, is the claim.
core::Result<void> LockWindow(core::MariaDbConnection& conn, int64_t now_ms, size_t limit,
                              PlanInput& input, std::vector<LockedRow>& locked) {
  auto window = SelectWindow(conn, now_ms, limit);
  if (!window) return core::Fail(window.error());
  locked = std::move(*window);
  input.window_rows = locked.size();
  for (const LockedRow& row : locked) input.locked.push_back(row.plan);
  return {};
}

// Each room's part of the batch, in rows: its share of the batch's messages (the batch over the
// rooms due, at least one message, at most the run cut's when pacing cuts runs) of pack_events
// rows each.
size_t RoomPart(size_t rooms, const ClaimOptions& options) {
  const RoomRules& rules = options.rooms;
  size_t messages = std::max<size_t>(1, (options.limit + rooms - 1) / rooms);
  if (rules.CutRows() > 0) messages = std::min(messages, std::max<size_t>(rules.run_cut_rows, 1));
  return messages * rules.PackEvents();
}

// A head that recorded a pack larger than the room's part (pack_size): the rows of the room's
// part with that pack as its first message. 0 when the part holds it already.
size_t RecordedPart(const std::vector<PlanRow>& rows, size_t part, const RoomRules& rules) {
  if (rows.empty() || rows.front().pack_size == 0) return 0;
  const size_t first = rules.FirstMessageRows(rows.front().pack_size);
  const size_t wanted = part - std::min(part, rules.PackEvents()) + first;
  return wanted > part ? wanted : 0;
}

// Reads the rooms' first rows: each room's part plus one (to see what ends the run), and further
// for a head whose recorded pack is larger than the part. Returns each room's part.
core::Result<std::map<std::string, size_t, std::less<>>> ReadRoomParts(
    core::MariaDbConnection& conn, const std::vector<std::string>& rooms,
    const ClaimOptions& options, PlanInput& input) {
  const size_t part = RoomPart(rooms.size(), options);
  std::map<std::string, size_t, std::less<>> part_of;
  std::vector<RoomRange> ranges;
  for (const std::string& room : rooms) {
    part_of[room] = part;
    ranges.push_back(RoomRange{room, 0, part + 1});
  }
  std::sort(ranges.begin(), ranges.end(),
            [](const RoomRange& a, const RoomRange& b) { return a.room_id < b.room_id; });
  if (auto read = ReadRooms(conn, ranges, false, input.pending); !read)
    return core::Fail(read.error());
  std::vector<RoomRange> further;
  for (auto& [room, rows] : input.pending) {
    const size_t wanted = RecordedPart(rows, part, options.rooms);
    if (wanted == 0) continue;
    part_of[room] = wanted;
    if (rows.size() == part + 1) further.push_back(RoomRange{room, rows.back().id, wanted - part});
  }
  if (auto read = ReadRooms(conn, further, true, input.pending); !read)
    return core::Fail(read.error());
  return part_of;
}

// With per-room order: the rooms due, each room's first rows from its head (its part of the batch,
// plus one to see what ends the run), and the due ones of its part, locked. `more_rows` is set when
// a room has rows beyond its part.
core::Result<void> LockRoomRuns(core::MariaDbConnection& conn, int64_t now_ms,
                                const ClaimOptions& options, PlanInput& input,
                                std::vector<LockedRow>& locked, bool& more_rows) {
  auto rooms = SelectDueRooms(conn, options.limit);
  if (!rooms) return core::Fail(rooms.error());
  input.window_rows = rooms->size();
  input.rooms = std::move(*rooms);
  if (input.rooms.empty()) return {};
  auto part_of = ReadRoomParts(conn, input.rooms, options, input);
  if (!part_of) return core::Fail(part_of.error());
  std::vector<int64_t> ids;
  for (const auto& [room, rows] : input.pending) {
    const size_t part = part_of->find(room)->second;
    // The room has rows beyond its part: whatever this claim leases, it has more to send.
    if (rows.size() > part) more_rows = true;
    for (size_t k = 0; k < rows.size() && k < part && rows[k].next_attempt_at_ms <= now_ms; ++k) {
      ids.push_back(rows[k].id);
    }
  }
  std::sort(ids.begin(), ids.end());
  auto rows = LockRows(conn, now_ms, ids);
  if (!rows) return core::Fail(rows.error());
  locked = std::move(*rows);
  for (const LockedRow& row : locked) input.locked.push_back(row.plan);
  return {};
}

// Read -> plan -> write, inside the caller's transaction. With per-room order the listing comes
// first, so the claim's next due time counts the rooms it put on the schedule.
core::Result<Claim> ClaimOnce(core::MariaDbConnection& conn, const ClaimOptions& options) {
  const bool rooms = options.rooms.per_room_order;
  Claim claim;
  if (rooms) {
    auto listed = ListArrivals(conn, ListLimit(options));
    if (!listed) return core::Fail(listed.error());
    claim.rows_listed = listed->rows;
    claim.more_due = listed->full;
  }
  auto now = ServerNow(conn, rooms ? core::sql::Stmt::kServerNowRooms : core::sql::Stmt::kServerNow,
                       claim);
  if (!now) return core::Fail(now.error());
  claim.server_now_ms = *now;
  PlanInput input;
  std::vector<LockedRow> locked;
  bool more_rows = false;
  auto read = rooms ? LockRoomRuns(conn, *now, options, input, locked, more_rows)
                    : LockWindow(conn, *now, options.limit, input, locked);
  if (!read) return core::Fail(read.error());
  if (input.window_rows >= options.limit || more_rows) claim.more_due = true;
  const PlanOptions plan_options = ToPlanOptions(options, *now);
  ClaimPlan plan = PlanClaim(plan_options, input);
  if (!plan.extensions.empty()) {
    if (auto extended = Extend(conn, *now, plan, input, locked); !extended) {
      return core::Fail(extended.error());
    }
    plan = PlanClaim(plan_options, input);
  }
  return WritePlan(conn, options, plan, std::move(locked), std::move(claim));
}

}  // namespace

core::Result<Claim> MariaDbRelayStore::ClaimDue(const ClaimOptions& options) {
  if (options.lease_ms <= 0) {
    return core::Fail(ErrorCode::kInvalidArgument, "ClaimDue: lease_ms must be positive, got " +
                                                       std::to_string(options.lease_ms));
  }
  if (options.limit == 0) {
    return Claim{};
  }
  // Rows a claim may have leased without knowing it go back first, so this claim can take them.
  if (auto given_back = ReleaseUncertainLeases(); !given_back) {
    return core::Fail(given_back.error());
  }
  auto claimed = session_.WithConnection([&](core::MariaDbConnection& conn) -> core::Result<Claim> {
    for (int attempt = 1;; ++attempt) {
      auto claim = ClaimTransaction(conn, options);
      // A deadlock or lock wait timeout rolled the whole claim back: run it again at once.
      if (claim || claim.error().code != ErrorCode::kAborted || attempt == kClaimAttempts) {
        return claim;
      }
    }
  });
  if (!claimed && !uncertain_.empty()) {
    // A cut connection: the server may answer a new one at once; if not, the next claim tries.
    (void)ReleaseUncertainLeases();
  }
  return claimed;
}

core::Result<Claim> MariaDbRelayStore::ClaimTransaction(core::MariaDbConnection& conn,
                                                        const ClaimOptions& options) {
  if (auto begun = conn.Begin(); !begun) return core::Fail(begun.error());
  auto claim = ClaimOnce(conn, options);
  if (!claim) {
    session_.Abort(conn);
    return claim;
  }
  if (auto committed = conn.Commit(); !committed) {
    session_.Abort(conn);
    // No answer (a read-only refusal or any other server error is one: rolled back): the lease
    // may be on the server, held by a token nobody will use.
    if (committed.error().code == ErrorCode::kUnavailable &&
        !core::IsReadOnlyRefusal(committed.error()) && !claim->rows.empty()) {
      NoteUncertainLease(*claim);
    }
    return core::Fail(committed.error());
  }
  return claim;
}

void MariaDbRelayStore::NoteUncertainLease(const Claim& claim) {
  if (uncertain_.size() == kMaxUncertainLeases) {
    uncertain_.erase(uncertain_.begin());  // its rows wait out their lease
  }
  UncertainLease lease{claim.token, {}};
  lease.ids.reserve(claim.rows.size());
  for (const OutboxRow& row : claim.rows) lease.ids.push_back(row.id);
  uncertain_.push_back(std::move(lease));
}

core::Result<void> MariaDbRelayStore::ReleaseUncertainLeases() {
  while (!uncertain_.empty()) {
    // Token-checked: rows the lost COMMIT did not lease, or that another claim holds since,
    // are left as they are.
    auto released = Release(uncertain_.front().token, uncertain_.front().ids);
    if (!released) return core::Fail(released.error());
    uncertain_.erase(uncertain_.begin());
  }
  return {};
}

}  // namespace room_outbox::relay
