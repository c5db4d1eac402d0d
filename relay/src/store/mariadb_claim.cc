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
#include <array>
#include <map>
#include <utility>

#include "core/claim_token.h"
#include "core/mysql/id_lists.h"
#include "core/mysql/mysql_error.h"
#include "core/mysql/outbox_sql.h"
#include "store/claim_plan.h"
#include "store/mariadb_relay_store.h"

namespace room_outbox::relay {
namespace {

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

// A row the claim holds locked: what the relay gets and what the plan needs.
struct LockedRow {
  OutboxRow row;
  PlanRow plan;
};

// A room range to read: the room's pending rows after `after_id` (0: from its head).
struct RoomRange {
  std::string room_id;
  int64_t after_id = 0;
  size_t rows = 0;
};

// The claim's server now and, in `claim`, how soon the earliest room (per-room order) or pending
// row (without it) not yet due comes due.
core::Result<int64_t> ServerNow(core::MariaDbConnection& conn, const core::sql::Statement& id,
                                Claim& claim) {
  auto row = conn.QueryOneRow(id);
  if (!row) return core::Fail(row.error());
  auto now = row->Int(0);
  if (!now) return core::Fail(now.error());
  if (!row->IsNull(1)) {
    auto next_due = row->Int(1);
    if (!next_due) return core::Fail(next_due.error());
    claim.next_due_in_ms = *next_due - *now;
  }
  return *now;
}

// Reads the rows of a statement returning ROOM_OUTBOX_CLAIM_COLUMNS.
core::Result<std::vector<LockedRow>> ReadLocked(core::PreparedStatement& stmt) {
  auto rows = stmt.FetchAll();
  if (!rows) return core::Fail(rows.error());
  std::vector<LockedRow> out;
  out.reserve(rows->size());
  for (core::ResultRow& r : *rows) {
    std::array<core::Result<int64_t>, 8> ints = {r.Int(0), r.Int(5), r.Int(6),  r.Int(7),
                                                 r.Int(8), r.Int(9), r.Int(10), r.Int(11)};
    for (const auto& value : ints) {
      if (!value) return core::Fail(value.error());
    }
    LockedRow locked;
    locked.row.id = *ints[0];
    locked.row.event_id = r.TakeStr(1);
    locked.row.event_type = r.TakeStr(2);
    locked.row.room_id = r.TakeStr(3);
    locked.row.envelope = r.TakeStr(4);
    locked.row.retry_count = *ints[1];
    locked.row.created_at_ms = *ints[2];
    locked.row.drop_count = static_cast<uint32_t>(*ints[5]);
    locked.row.parked_before = *ints[6] != 0;
    locked.row.pack_size = static_cast<uint32_t>(*ints[7]);
    locked.plan = PlanRow{locked.row.id,
                          locked.row.room_id,
                          locked.row.event_type,
                          *ints[3],
                          *ints[4] != 0,
                          locked.row.pack_size,
                          {}};
    out.push_back(std::move(locked));
  }
  return out;
}

core::Result<std::vector<LockedRow>> SelectWindow(core::MariaDbConnection& conn, int64_t now_ms,
                                                  size_t limit) {
  auto stmt = conn.Prepared(core::sql::Stmt::kClaimWindow);
  if (!stmt) return core::Fail(stmt.error());
  const std::array<core::SqlValue, 2> params = {now_ms, static_cast<int64_t>(limit)};
  if (auto done = (*stmt)->Execute(params); !done) return core::Fail(done.error());
  return ReadLocked(**stmt);
}

// Runs the id-list statement `id` over `ids` (in the given order, chunked), after `lead` params.
core::Result<void> ForIds(core::MariaDbConnection& conn, const core::sql::Statement& id,
                          const std::vector<core::SqlValue>& lead,
                          const std::vector<int64_t>& ids) {
  return core::ForEachChunk(ids.size(),
                            [&](size_t size, size_t at, size_t count) -> core::Result<void> {
                              auto stmt = conn.Prepared(id, size);
                              if (!stmt) return core::Fail(stmt.error());
                              std::vector<core::SqlValue> params = lead;
                              for (size_t k = 0; k < size; ++k) {
                                params.emplace_back(ids[at + std::min(k, count - 1)]);
                              }
                              return (*stmt)->Execute(params);
                            });
}

// The listing (kListArrivals, kListRooms, kListMark): up to `limit` pending rows not yet on the
// room schedule, locked, their rooms put on it (due when their earliest row is), the rows marked
// listed but for those in flight, which stay unlisted for their holder to give back. Returns how
// many rows were listed; `full` when the read reached its limit.
struct Listed {
  size_t rows = 0;
  bool full = false;
};

core::Result<Listed> ListArrivals(core::MariaDbConnection& conn, size_t limit) {
  auto stmt = conn.Prepared(core::sql::Stmt::kListArrivals);
  if (!stmt) return core::Fail(stmt.error());
  const std::array<core::SqlValue, 1> params = {static_cast<int64_t>(limit)};
  if (auto done = (*stmt)->Execute(params); !done) return core::Fail(done.error());
  auto rows = (*stmt)->FetchAll();
  if (!rows) return core::Fail(rows.error());
  std::vector<std::pair<std::string, int64_t>> read;  // (room_id, id)
  std::vector<int64_t> arrived;                       // not in flight
  for (core::ResultRow& r : *rows) {
    auto id = r.Int(0);
    auto in_flight = r.Int(2);
    if (!id || !in_flight) return core::Fail(!id ? id.error() : in_flight.error());
    read.emplace_back(r.TakeStr(1), *id);
    if (*in_flight == 0) arrived.push_back(*id);
  }
  Listed listed{arrived.size(), rows->size() >= limit};
  if (read.empty()) return listed;
  // Rooms are locked in room_id order across every chunk of kListRooms (outbox_sql.h says why).
  std::sort(read.begin(), read.end());
  std::vector<int64_t> ids;
  ids.reserve(read.size());
  for (const auto& [room, id] : read) ids.push_back(id);
  if (auto put = ForIds(conn, core::sql::Stmt::kListRooms, {}, ids); !put) {
    return core::Fail(put.error());
  }
  std::sort(arrived.begin(), arrived.end());
  if (auto marked = ForIds(conn, core::sql::Stmt::kListMark, {}, arrived); !marked) {
    return core::Fail(marked.error());
  }
  return listed;
}

// The rooms due, oldest due first, at most `limit`, locked (kDueRooms).
core::Result<std::vector<std::string>> SelectDueRooms(core::MariaDbConnection& conn, size_t limit) {
  auto stmt = conn.Prepared(core::sql::Stmt::kDueRooms);
  if (!stmt) return core::Fail(stmt.error());
  const std::array<core::SqlValue, 1> params = {static_cast<int64_t>(limit)};
  if (auto done = (*stmt)->Execute(params); !done) return core::Fail(done.error());
  auto rows = (*stmt)->FetchAll();
  if (!rows) return core::Fail(rows.error());
  std::vector<std::string> rooms;
  rooms.reserve(rows->size());
  for (core::ResultRow& r : *rows) rooms.push_back(r.TakeStr(0));
  return rooms;
}

// One row of a room read (kRoomPrefix, kRoomAfter): room_id, id, event_type, next_attempt_at_ms,
// leased, claim_token, pack_size.
core::Result<PlanRow> ReadRoomRow(core::ResultRow& r) {
  std::array<core::Result<int64_t>, 4> ints = {r.Int(1), r.Int(3), r.Int(4), r.Int(6)};
  for (const auto& value : ints) {
    if (!value) return core::Fail(value.error());
  }
  PlanRow row{*ints[0], r.TakeStr(0),  r.TakeStr(2),
              *ints[1], *ints[2] != 0, static_cast<uint32_t>(*ints[3]),
              {}};
  if (!r.IsNull(5)) row.claim_token = r.TakeStr(5);
  return row;
}

// Reads the pending rows of each range (non-locking) into `pending`, per room in id order.
core::Result<void> ReadRooms(core::MariaDbConnection& conn, const std::vector<RoomRange>& ranges,
                             bool after, std::map<std::string, std::vector<PlanRow>>& pending) {
  return core::ForEachChunk(
      ranges.size(), [&](size_t size, size_t at, size_t count) -> core::Result<void> {
        auto stmt =
            conn.Prepared(after ? core::sql::Stmt::kRoomAfter : core::sql::Stmt::kRoomPrefix, size);
        if (!stmt) return core::Fail(stmt.error());
        std::vector<core::SqlValue> params;
        for (size_t k = 0; k < size; ++k) {
          const RoomRange& range = ranges[at + std::min(k, count - 1)];
          params.emplace_back(range.room_id);
          if (after) params.emplace_back(range.after_id);
          params.emplace_back(k < count ? static_cast<int64_t>(range.rows) : int64_t{0});
        }
        if (auto done = (*stmt)->Execute(params); !done) return done;
        auto rows = (*stmt)->FetchAll();
        if (!rows) return core::Fail(rows.error());
        for (core::ResultRow& r : *rows) {
          auto row = ReadRoomRow(r);
          if (!row) return core::Fail(row.error());
          std::vector<PlanRow>& room = pending[row->room_id];
          // A range that starts at a row the room's read already holds adds only what follows.
          if (room.empty() || row->id > room.back().id) room.push_back(std::move(*row));
        }
        return {};
      });
}

core::Result<std::vector<LockedRow>> LockRows(core::MariaDbConnection& conn, int64_t now_ms,
                                              const std::vector<int64_t>& ids) {
  std::vector<LockedRow> out;
  auto locked = core::ForEachChunk(ids.size(),
                                   [&](size_t size, size_t at, size_t count) -> core::Result<void> {
                                     auto stmt = conn.Prepared(core::sql::Stmt::kLockRows, size);
                                     if (!stmt) return core::Fail(stmt.error());
                                     std::vector<core::SqlValue> params = {now_ms};
                                     for (size_t k = 0; k < size; ++k)
                                       params.emplace_back(ids[at + std::min(k, count - 1)]);
                                     if (auto done = (*stmt)->Execute(params); !done) return done;
                                     auto rows = ReadLocked(**stmt);
                                     if (!rows) return core::Fail(rows.error());
                                     for (LockedRow& row : *rows) out.push_back(std::move(row));
                                     return {};
                                   });
  if (!locked) return core::Fail(locked.error());
  return out;
}

core::Result<void> Lease(core::MariaDbConnection& conn, const std::vector<int64_t>& ids,
                         const Claim& claim) {
  uint64_t leased = 0;
  auto updated = core::ForEachChunk(
      ids.size(), [&](size_t size, size_t at, size_t count) -> core::Result<void> {
        auto stmt = conn.Prepared(core::sql::Stmt::kLease, size);
        if (!stmt) return core::Fail(stmt.error());
        std::vector<core::SqlValue> params = {claim.token, claim.lease_until_ms,
                                              claim.server_now_ms};
        for (size_t k = 0; k < size; ++k) params.emplace_back(ids[at + std::min(k, count - 1)]);
        if (auto done = (*stmt)->Execute(params); !done) return done;
        leased += (*stmt)->AffectedRows();
        return {};
      });
  if (!updated) return updated;
  if (leased != ids.size()) {
    // This transaction holds the row locks; a mismatch is a bug worth stopping on.
    return core::Fail(ErrorCode::kInternal, "lease: updated " + std::to_string(leased) + " of " +
                                                std::to_string(ids.size()) + " locked rows");
  }
  return {};
}

// A CASE-list statement (kSchedule, kRoomsDue): pairs (key, value), then `between`, then the keys.
template <class Key>
core::Result<void> CaseList(core::MariaDbConnection& conn, const core::sql::Statement& id,
                            const std::vector<std::pair<Key, int64_t>>& pairs,
                            const std::vector<core::SqlValue>& between) {
  return core::ForEachChunk(pairs.size(),
                            [&](size_t size, size_t at, size_t count) -> core::Result<void> {
                              auto stmt = conn.Prepared(id, size);
                              if (!stmt) return core::Fail(stmt.error());
                              std::vector<core::SqlValue> params;
                              for (size_t k = 0; k < size; ++k) {
                                const auto& pair = pairs[at + std::min(k, count - 1)];
                                params.emplace_back(pair.first);
                                params.emplace_back(pair.second);
                              }
                              for (const core::SqlValue& value : between) params.push_back(value);
                              for (size_t k = 0; k < size; ++k)
                                params.emplace_back(pairs[at + std::min(k, count - 1)].first);
                              return (*stmt)->Execute(params);
                            });
}

core::Result<void> Schedule(core::MariaDbConnection& conn, const std::vector<PlannedSchedule>& rows,
                            int64_t now_ms) {
  std::vector<std::pair<int64_t, int64_t>> pairs;
  pairs.reserve(rows.size());
  for (const PlannedSchedule& row : rows) pairs.emplace_back(row.id, row.next_attempt_at_ms);
  return CaseList(conn, core::sql::Stmt::kSchedule, pairs, {now_ms});
}

// The rooms the claim took: each one's next due time, idle for those without pending rows.
core::Result<void> WriteRooms(core::MariaDbConnection& conn, const ClaimPlan& plan) {
  std::vector<std::pair<std::string, int64_t>> pairs;
  pairs.reserve(plan.rooms_due.size() + plan.rooms_idle.size());
  for (const PlannedRoomDue& room : plan.rooms_due)
    pairs.emplace_back(room.room_id, room.due_at_ms);
  for (const std::string& room : plan.rooms_idle) {
    pairs.emplace_back(room, core::sql::kIdleRoomDueMs);
  }
  // Rooms in room_id order, as every other writer of the schedule.
  std::sort(pairs.begin(), pairs.end());
  return CaseList(conn, core::sql::Stmt::kRoomsDue, pairs, {});
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

core::Result<Claim> WritePlan(core::MariaDbConnection& conn, const ClaimOptions& options,
                              const ClaimPlan& plan, std::vector<LockedRow> locked, Claim claim) {
  claim.more_due = claim.more_due || plan.more_due;
  if (!plan.lease.empty()) {
    claim.token = options.token_prefix.empty() ? core::NewClaimToken()
                                               : core::NewRelayClaimToken(options.token_prefix);
    claim.lease_until_ms = claim.server_now_ms + options.lease_ms;
    if (auto leased = Lease(conn, plan.lease, claim); !leased) return core::Fail(leased.error());
  }
  if (auto scheduled = Schedule(conn, plan.schedule, claim.server_now_ms); !scheduled) {
    return core::Fail(scheduled.error());
  }
  if (auto rooms = WriteRooms(conn, plan); !rooms) return core::Fail(rooms.error());
  for (const PlannedRoomDue& room : plan.rooms_due) {
    // A room this claim made due soon (a head another holder is sending): the loop wakes for it.
    const int64_t in_ms = room.due_at_ms - claim.server_now_ms;
    if (in_ms > 0 && (!claim.next_due_in_ms || in_ms < *claim.next_due_in_ms)) {
      claim.next_due_in_ms = in_ms;
    }
  }
  for (const PlannedPacedRoom& room : plan.paced_rooms) {
    const int64_t paced_for =
        room.rows_scheduled > 0 ? std::max<int64_t>(0, room.last_slot_ms - claim.server_now_ms) : 0;
    claim.paced_rooms.push_back(PacedRoom{room.room_id, room.rows_scheduled, paced_for});
  }
  std::sort(locked.begin(), locked.end(),
            [](const LockedRow& a, const LockedRow& b) { return a.row.id < b.row.id; });
  for (LockedRow& row : locked) {
    // An extension may lock again a row the window holds: each row goes out once.
    const bool repeated = !claim.rows.empty() && claim.rows.back().id == row.row.id;
    if (!repeated && std::binary_search(plan.lease.begin(), plan.lease.end(), row.row.id)) {
      claim.rows.push_back(std::move(row.row));
    }
  }
  return claim;
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
