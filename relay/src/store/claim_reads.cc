#include "store/claim_reads.h"

#include <algorithm>
#include <array>
#include <utility>

#include "core/mysql/id_lists.h"

namespace room_outbox::relay::claim_sql {
namespace {

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

}  // namespace

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

core::Result<std::vector<LockedRow>> SelectWindow(core::MariaDbConnection& conn, int64_t now_ms,
                                                  size_t limit) {
  auto stmt = conn.Prepared(core::sql::Stmt::kClaimWindow);
  if (!stmt) return core::Fail(stmt.error());
  const std::array<core::SqlValue, 2> params = {now_ms, static_cast<int64_t>(limit)};
  if (auto done = (*stmt)->Execute(params); !done) return core::Fail(done.error());
  return ReadLocked(**stmt);
}

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

}  // namespace room_outbox::relay::claim_sql
