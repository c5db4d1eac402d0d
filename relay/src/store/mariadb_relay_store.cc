// MariaDbRelayStore: the factory, AnyDue, Stats and the choice of the claim's heads read. The claim
// is in mariadb_claim.cc, the result writes in relay_marks.cc.
#include "store/mariadb_relay_store.h"

#include <array>

#include "core/mysql/outbox_sql.h"

namespace room_outbox::relay {

namespace {

// The rooms whose head has waited longer than kRoomWaitingMs (kRoomsWaiting, prepared for this
// read only: outbox_sql.h says why).
core::Result<int64_t> RoomsWaiting(core::MariaDbConnection& conn,
                                   const core::sql::Statement& waiting) {
  auto stmt = conn.PrepareOnce(waiting);
  if (!stmt) return core::Fail(stmt.error());
  const std::array<core::SqlValue, 1> params = {kRoomWaitingMs};
  if (auto done = (*stmt)->Execute(params); !done) return core::Fail(done.error());
  auto rows = (*stmt)->FetchAll();
  if (!rows) return core::Fail(rows.error());
  if (rows->size() != 1) {
    return core::Fail(ErrorCode::kInternal,
                      "rooms_waiting: expected one row, got " + std::to_string(rows->size()));
  }
  return (*rows)[0].Int(0);
}

}  // namespace

std::unique_ptr<MariaDbRelayStore> MakeMariaDbRelayStore(const MysqlOptions& options) {
  return std::make_unique<MariaDbRelayStore>(options);
}

core::Result<bool> MariaDbRelayStore::AnyDue() {
  return session_.WithConnection([&](core::MariaDbConnection& conn) -> core::Result<bool> {
    auto row = conn.QueryOneRow(core::sql::Stmt::kAnyDue);
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

core::Result<MariaDbRelayStore::RoomHeads> MariaDbRelayStore::RoomHeadsOf(
    core::MariaDbConnection& conn) {
  if (heads_.due != nullptr && heads_connection_ == conn.ConnectionId()) {
    return heads_;
  }
  auto row = conn.QueryOneRow(core::sql::Stmt::kRoomHeadsIndex);
  if (!row) {
    return core::Fail(ErrorCode::kInternal, "room_outbox has no index idx_room_status (" +
                                                row.error().message +
                                                "): its schema is not the one outbox-relay needs");
  }
  const std::string first = row->TakeStr(0);
  if (first == "status") {
    heads_ = {&core::sql::Stmt::kDueHeads, &core::sql::Stmt::kRoomsWaiting};
  } else if (first == "room_id") {
    heads_ = {&core::sql::Stmt::kDueHeadsByRoom, &core::sql::Stmt::kRoomsWaitingByRoom};
  } else {
    return core::Fail(ErrorCode::kInternal, "idx_room_status starts with column '" + first +
                                                "', neither status (schema 006) nor room_id");
  }
  heads_connection_ = conn.ConnectionId();
  return heads_;
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
    auto heads = RoomHeadsOf(conn);
    if (!heads) return core::Fail(heads.error());
    auto waiting = RoomsWaiting(conn, *heads->waiting);
    if (!waiting) return core::Fail(waiting.error());
    return OutboxStats{.pending = *pending,
                       .oldest_pending_age_ms = *age,
                       .rooms_held_back = *held_back,
                       .rooms_waiting = *waiting};
  });
}

}  // namespace room_outbox::relay
