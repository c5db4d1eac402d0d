// MariaDbRelayStore::ClaimDue: as read -> plan -> write in one short transaction
// (claim_plan.h). Every statement's text and the index it relies on are in outbox_sql.h.
//
// With per-room order the claim starts from the rooms' heads, not from a walk of due rows: it
// reads the due heads (kDueHeads, at most the batch, oldest due first), shares the batch out over
// their rooms, reads each room's first rows from its head (its part of the batch plus one) and
// locks the due ones. So a room is reached as soon as its head is due, whatever another room's
// backlog, and the cost of a claim follows the rooms it serves.
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

// The claim's server now and, in `claim`, how soon the earliest pending row not yet due comes due.
core::Result<int64_t> ServerNow(core::MariaDbConnection& conn, Claim& claim) {
  auto stmt = conn.Prepared(core::sql::Stmt::kServerNow);
  if (!stmt) return core::Fail(stmt.error());
  if (auto done = (*stmt)->Execute({}); !done) return core::Fail(done.error());
  auto rows = (*stmt)->FetchAll();
  if (!rows) return core::Fail(rows.error());
  if (rows->size() != 1) {
    return core::Fail(ErrorCode::kInternal,
                      "server_now: " + std::to_string(rows->size()) + " rows");
  }
  auto now = (*rows)[0].Int(0);
  if (!now) return core::Fail(now.error());
  if (!(*rows)[0].IsNull(1)) {
    auto next_due = (*rows)[0].Int(1);
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
    locked.plan = PlanRow{locked.row.id, locked.row.room_id, locked.row.event_type,
                          *ints[3],      *ints[4] != 0,      locked.row.pack_size};
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

// A due head as kDueHeads reads it.
struct DueHead {
  std::string room_id;
  int64_t id = 0;
  uint32_t pack_size = 0;  // the pack it headed when that send failed without a definite drop
};

// The due heads, oldest due first, at most `limit` (kDueHeads or its schema-005 form).
core::Result<std::vector<DueHead>> SelectDueHeads(core::MariaDbConnection& conn,
                                                  const core::sql::Statement& heads, int64_t now_ms,
                                                  size_t limit) {
  // Prepared for this claim only: re-executed, MariaDB would drop the loose scan (outbox_sql.h).
  auto stmt = conn.PrepareOnce(heads);
  if (!stmt) return core::Fail(stmt.error());
  const std::array<core::SqlValue, 2> params = {now_ms, static_cast<int64_t>(limit)};
  if (auto done = (*stmt)->Execute(params); !done) return core::Fail(done.error());
  auto rows = (*stmt)->FetchAll();
  if (!rows) return core::Fail(rows.error());
  std::vector<DueHead> out;
  for (core::ResultRow& r : *rows) {
    auto id = r.Int(1);
    if (!id) return core::Fail(id.error());
    auto pack_size = r.Int(2);
    if (!pack_size) return core::Fail(pack_size.error());
    out.push_back(DueHead{r.TakeStr(0), *id, static_cast<uint32_t>(*pack_size)});
  }
  return out;
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
          std::array<core::Result<int64_t>, 3> ints = {r.Int(1), r.Int(3), r.Int(4)};
          for (const auto& value : ints) {
            if (!value) return core::Fail(value.error());
          }
          std::string room = r.TakeStr(0);
          pending[room].push_back(PlanRow{*ints[0], room, r.TakeStr(2), *ints[1], *ints[2] != 0});
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

core::Result<void> Schedule(core::MariaDbConnection& conn, const std::vector<PlannedSchedule>& rows,
                            int64_t now_ms) {
  return core::ForEachChunk(rows.size(),
                            [&](size_t size, size_t at, size_t count) -> core::Result<void> {
                              auto stmt = conn.Prepared(core::sql::Stmt::kSchedule, size);
                              if (!stmt) return core::Fail(stmt.error());
                              std::vector<core::SqlValue> params;
                              for (size_t k = 0; k < size; ++k) {
                                const PlannedSchedule& row = rows[at + std::min(k, count - 1)];
                                params.emplace_back(row.id);
                                params.emplace_back(row.next_attempt_at_ms);
                              }
                              params.emplace_back(now_ms);
                              for (size_t k = 0; k < size; ++k)
                                params.emplace_back(rows[at + std::min(k, count - 1)].id);
                              return (*stmt)->Execute(params);
                            });
}

PlanOptions ToPlanOptions(const ClaimOptions& options, int64_t server_now_ms) {
  PlanOptions plan;
  plan.server_now_ms = server_now_ms;
  plan.limit = options.limit;
  plan.rooms = options.rooms;
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
  claim.more_due = plan.more_due;
  if (!plan.lease.empty()) {
    claim.token = options.token_prefix.empty() ? core::NewClaimToken()
                                               : core::NewRelayClaimToken(options.token_prefix);
    claim.lease_until_ms = claim.server_now_ms + options.lease_ms;
    if (auto leased = Lease(conn, plan.lease, claim); !leased) return core::Fail(leased.error());
  }
  if (auto scheduled = Schedule(conn, plan.schedule, claim.server_now_ms); !scheduled) {
    return core::Fail(scheduled.error());
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

// Each due room's part of the batch: the batch shared equally, but with packs (pack_events > 1)
// the rooms of the oldest heads (lowest id: the order in which the plan shares the batch out) that
// a message each would fill the batch with get a message's worth, so the plan can give them whole
// packs; and a head that recorded a pack (pack_size) gets at least that pack
// (RoomRules::FirstMessageRows), so the claim can hold it whole and the resend is the same pack.
std::vector<size_t> HeadParts(const std::vector<DueHead>& heads, size_t limit,
                              const RoomRules& rules) {
  const size_t equal = (limit + heads.size() - 1) / heads.size();
  const size_t pack = std::min(rules.PackEvents(), limit);
  std::vector<size_t> parts(heads.size(), equal);
  if (pack > equal) {
    std::vector<size_t> oldest(heads.size());
    for (size_t k = 0; k < oldest.size(); ++k) oldest[k] = k;
    std::sort(oldest.begin(), oldest.end(),
              [&](size_t a, size_t b) { return heads[a].id < heads[b].id; });
    const size_t packed_rooms = (limit + pack - 1) / pack;
    for (size_t k = 0; k < oldest.size() && k < packed_rooms; ++k) parts[oldest[k]] = pack;
  }
  for (size_t k = 0; k < heads.size(); ++k) {
    if (heads[k].pack_size > 0) {
      parts[k] = std::max(parts[k], rules.FirstMessageRows(heads[k].pack_size, limit));
    }
  }
  return parts;
}

// With per-room order: the due heads, each room's first rows from its head (its part of the batch,
// HeadParts, plus one to see what ends the run), and the due ones of its part, locked.
core::Result<void> LockHeadRuns(core::MariaDbConnection& conn, const core::sql::Statement& heads,
                                int64_t now_ms, size_t limit, const RoomRules& rules,
                                PlanInput& input, std::vector<LockedRow>& locked) {
  auto due = SelectDueHeads(conn, heads, now_ms, limit);
  if (!due) return core::Fail(due.error());
  input.window_rows = due->size();
  if (due->empty()) return {};
  const std::vector<size_t> parts = HeadParts(*due, limit, rules);
  std::map<std::string, size_t, std::less<>> part_of;
  std::vector<RoomRange> ranges;
  for (size_t k = 0; k < due->size(); ++k) {
    const std::string& room = (*due)[k].room_id;
    part_of[room] = parts[k];
    ranges.push_back(RoomRange{room, 0, parts[k] + 1});
  }
  std::sort(ranges.begin(), ranges.end(),
            [](const RoomRange& a, const RoomRange& b) { return a.room_id < b.room_id; });
  if (auto read = ReadRooms(conn, ranges, false, input.pending); !read) return read;
  std::vector<int64_t> ids;
  for (const auto& [room, rows] : input.pending) {
    const size_t part = part_of[room];
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

// Read -> plan -> write, inside the caller's transaction. `heads` is the heads read that fits the
// database (per-room order only).
core::Result<Claim> ClaimOnce(core::MariaDbConnection& conn, const ClaimOptions& options,
                              const core::sql::Statement* heads) {
  Claim claim;
  auto now = ServerNow(conn, claim);
  if (!now) return core::Fail(now.error());
  claim.server_now_ms = *now;
  PlanInput input;
  std::vector<LockedRow> locked;
  auto read = heads != nullptr
                  ? LockHeadRuns(conn, *heads, *now, options.limit, options.rooms, input, locked)
                  : LockWindow(conn, *now, options.limit, input, locked);
  if (!read) return core::Fail(read.error());
  if (locked.empty()) {
    claim.more_due = input.window_rows >= options.limit;
    return claim;
  }
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
    const core::sql::Statement* heads = nullptr;
    if (options.rooms.per_room_order) {
      auto chosen = RoomHeadsOf(conn);
      if (!chosen) return core::Fail(chosen.error());
      heads = chosen->due;
    }
    for (int attempt = 1;; ++attempt) {
      auto claim = ClaimTransaction(conn, options, heads);
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
                                                        const ClaimOptions& options,
                                                        const core::sql::Statement* heads) {
  if (auto begun = conn.Begin(); !begun) return core::Fail(begun.error());
  auto claim = ClaimOnce(conn, options, heads);
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
    auto released = session_.Release(uncertain_.front().token, uncertain_.front().ids);
    if (!released) return core::Fail(released.error());
    uncertain_.erase(uncertain_.begin());
  }
  return {};
}

}  // namespace room_outbox::relay
