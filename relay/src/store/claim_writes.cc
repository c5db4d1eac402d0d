#include "store/claim_writes.h"

#include <algorithm>
#include <string>
#include <utility>

#include "core/claim_token.h"
#include "core/mysql/id_lists.h"
#include "core/mysql/outbox_sql.h"

namespace room_outbox::relay::claim_sql {
namespace {

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

}  // namespace

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

}  // namespace room_outbox::relay::claim_sql
