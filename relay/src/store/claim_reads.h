#pragma once
// The claim's reads and row locks (MariaDbRelayStore::ClaimDue, mariadb_claim.cc): the server's
// clock, the listing of arrivals onto the room schedule, the due rooms, each room's rows from its
// head, the row locks. Every statement's text and the index it relies on are in outbox_sql.h.

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/mysql/connection.h"
#include "core/mysql/outbox_sql.h"
#include "store/claim_plan.h"
#include "store/relay_store.h"

namespace room_outbox::relay::claim_sql {

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

// What a listing did: the rows it listed; `full` when its read reached its limit.
struct Listed {
  size_t rows = 0;
  bool full = false;
};

// The listing (kListArrivals, kListRooms, kListMark): up to `limit` pending rows not yet on the
// room schedule, locked, their rooms put on it (due when their earliest row is), the rows marked
// listed but for those in flight, which stay unlisted for their holder to give back.
core::Result<Listed> ListArrivals(core::MariaDbConnection& conn, size_t limit);

// The claim's server now and, in `claim`, how soon the earliest room (per-room order) or pending
// row (without it) not yet due comes due.
core::Result<int64_t> ServerNow(core::MariaDbConnection& conn, const core::sql::Statement& id,
                                Claim& claim);

// Without per-room order: the due rows, oldest first, at most `limit`, locked (kClaimWindow).
core::Result<std::vector<LockedRow>> SelectWindow(core::MariaDbConnection& conn, int64_t now_ms,
                                                  size_t limit);

// The rooms due, oldest due first, at most `limit`, locked (kDueRooms).
core::Result<std::vector<std::string>> SelectDueRooms(core::MariaDbConnection& conn, size_t limit);

// Reads the pending rows of each range (non-locking) into `pending`, per room in id order;
// `after`: the ranges start after their after_id (kRoomAfter), else at the head (kRoomPrefix).
core::Result<void> ReadRooms(core::MariaDbConnection& conn, const std::vector<RoomRange>& ranges,
                             bool after, std::map<std::string, std::vector<PlanRow>>& pending);

// Locks the due rows among `ids` by primary key, skipping those another transaction holds.
core::Result<std::vector<LockedRow>> LockRows(core::MariaDbConnection& conn, int64_t now_ms,
                                              const std::vector<int64_t>& ids);

}  // namespace room_outbox::relay::claim_sql
