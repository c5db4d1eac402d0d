// MariaDbRelayStore: the factory, AnyDue and Stats. The claim is in mariadb_claim.cc, the result
// writes in relay_marks.cc.
#include "store/mariadb_relay_store.h"

#include <array>

#include "core/mysql/outbox_sql.h"

namespace room_outbox::relay {

namespace {

// The rooms backlogged and, of them, those whose head has waited longer than kRoomWaitingMs
// (kRoomsBacklog).
struct RoomsBacklog {
  int64_t backlogged = 0;
  int64_t waiting = 0;
};

core::Result<RoomsBacklog> ReadRoomsBacklog(core::MariaDbConnection& conn) {
  // Prepared for this read only: the server then chooses the heads' access path at each read.
  auto stmt = conn.PrepareOnce(core::sql::Stmt::kRoomsBacklog);
  if (!stmt) return core::Fail(stmt.error());
  const std::array<core::SqlValue, 1> params = {kRoomWaitingMs};
  if (auto done = (*stmt)->Execute(params); !done) return core::Fail(done.error());
  auto rows = (*stmt)->FetchAll();
  if (!rows) return core::Fail(rows.error());
  if (rows->size() != 1) {
    return core::Fail(ErrorCode::kInternal,
                      "rooms_backlog: expected one row, got " + std::to_string(rows->size()));
  }
  auto backlogged = (*rows)[0].Int(0);
  auto waiting = (*rows)[0].Int(1);
  if (!backlogged || !waiting)
    return core::Fail(!backlogged ? backlogged.error() : waiting.error());
  return RoomsBacklog{*backlogged, *waiting};
}

}  // namespace

std::unique_ptr<MariaDbRelayStore> MakeMariaDbRelayStore(const MysqlOptions& options,
                                                         int64_t room_gap_ms) {
  return std::make_unique<MariaDbRelayStore>(options, room_gap_ms);
}

core::Result<bool> MariaDbRelayStore::AnyDue(bool per_room_order) {
  return session_.WithConnection([&](core::MariaDbConnection& conn) -> core::Result<bool> {
    auto row =
        conn.QueryOneRow(per_room_order ? core::sql::Stmt::kAnyDueRooms : core::sql::Stmt::kAnyDue);
    if (!row) {
      return core::Fail(row.error());
    }
    auto due = row->Int(0);
    if (!due) {
      return core::Fail(due.error());
    }
    return *due != 0;
  });
}

core::Result<OutboxStats> MariaDbRelayStore::Stats() {
  return session_.WithConnection([&](core::MariaDbConnection& conn) -> core::Result<OutboxStats> {
    auto row = conn.QueryOneRow(core::sql::Stmt::kStats);
    if (!row) {
      return core::Fail(row.error());
    }
    auto pending = row->Int(0);
    auto age = row->Int(1);
    auto held_back = row->Int(2);
    if (!pending || !age || !held_back) {
      return core::Fail(!pending ? pending.error() : !age ? age.error() : held_back.error());
    }
    auto rooms = ReadRoomsBacklog(conn);
    if (!rooms) return core::Fail(rooms.error());
    return OutboxStats{.pending = *pending,
                       .oldest_pending_age_ms = *age,
                       .rooms_held_back = *held_back,
                       .rooms_waiting = rooms->waiting,
                       .rooms_backlogged = rooms->backlogged};
  });
}

}  // namespace room_outbox::relay
