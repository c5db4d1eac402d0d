// MariaDbOutboxStore, relay side: ClaimDue (select due rows, keep per-room runs, push back and
// pace rooms, lease).
#include <algorithm>
#include <array>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <unordered_map>
#include <utility>

#include "claim_token.h"
#include "mysql/id_lists.h"
#include "mysql/mariadb_outbox_store.h"
#include "mysql/outbox_sql.h"

namespace room_outbox {
namespace {

// Locks the due rows nobody else holds, in id order.
Result<std::vector<OutboxRow>> SelectDue(MariaDbConnection& conn, const ClaimOptions& options) {
  auto stmt = options.per_room_order ? conn.Prepared("claim_due_room_heads", sql::kClaimDueRoomHeads)
                                     : conn.Prepared("claim_due", sql::kClaimDue);
  if (!stmt) {
    return Fail(stmt.error());
  }
  std::vector<SqlValue> params = {options.now_ms};
  if (options.per_room_order) {
    params.emplace_back(options.now_ms);
  }
  params.emplace_back(static_cast<int64_t>(options.limit));
  if (auto done = (*stmt)->Execute(params); !done) {
    return Fail(done.error());
  }
  auto rows = (*stmt)->FetchAll();
  if (!rows) {
    return Fail(rows.error());
  }
  std::vector<OutboxRow> selected;
  selected.reserve(rows->size());
  for (ResultRow& r : *rows) {
    auto id = r.Int(0);
    auto retry_count = r.Int(5);
    auto created = r.Int(6);
    if (!id || !retry_count || !created) {
      return Fail(!id ? id.error() : !retry_count ? retry_count.error() : created.error());
    }
    OutboxRow row;
    row.id = *id;
    row.event_id = r.TakeStr(1);
    row.event_type = r.TakeStr(2);
    row.room_id = r.TakeStr(3);
    row.envelope = r.TakeStr(4);
    row.retry_count = *retry_count;
    row.created_at_ms = *created;
    selected.push_back(std::move(row));
  }
  std::sort(selected.begin(), selected.end(),
            [](const OutboxRow& a, const OutboxRow& b) { return a.id < b.id; });
  return selected;
}

// A room whose selected rows were left out although they were due before the room's oldest
// pending row, and that row's time.
struct PushBack {
  std::string room_id;
  int64_t head_next_attempt_at_ms = 0;
};

// A room whose run was cut at max_rows_per_room: the last row kept and how many of the kept
// rows are sent.
struct CutRoom {
  std::string room_id;
  int64_t last_kept_id = 0;
  size_t kept_paced = 0;
};

struct RoomRuns {
  std::vector<OutboxRow> kept;
  std::vector<CutRoom> cut;
  // Rooms with rows due earlier than their oldest pending row (the head). Ordered by
  // (next_attempt_at_ms, id) those rows sort ahead of the head and can fill every batch while
  // the head stays beyond the limit; pushed back to the head's time, they sort behind it (same
  // time, larger id) and the room's run starts at its head.
  std::vector<PushBack> push_back;
};

// Per-room order: keeps a room's selected rows only as the unbroken run that starts at the
// room's oldest pending row. A pending row that was not selected (held by another claim, not
// due, or past the limit) ends the run; the rows after it are not leased.
Result<RoomRuns> KeepRoomRuns(MariaDbConnection& conn, std::vector<OutboxRow> selected,
                              int64_t now_ms, size_t max_rows_per_room,
                              const std::set<std::string, std::less<>>& unpaced_types) {
  struct Pending {
    int64_t id;
    int64_t next_attempt_at_ms;
  };
  std::map<std::string, std::vector<Pending>> pending;  // room -> its pending rows, ascending
  for (const OutboxRow& row : selected) {
    pending.try_emplace(row.room_id);
  }
  std::vector<std::string> rooms;
  rooms.reserve(pending.size());
  for (const auto& entry : pending) {
    rooms.push_back(entry.first);
  }
  const int64_t max_id = selected.back().id;
  auto listed =
      ForEachChunk(rooms.size(), [&](size_t size, size_t at, size_t count) -> Result<void> {
        auto stmt = conn.Prepared(
            "room_pending_" + std::to_string(size),
            std::string(sql::kRoomPendingPrefix) + Placeholders(size) +
                std::string(sql::kRoomPendingSuffix));
        if (!stmt) {
          return Fail(stmt.error());
        }
        std::vector<SqlValue> params;
        params.reserve(size + 1);
        for (size_t k = 0; k < size; ++k) {
          params.emplace_back(rooms[at + std::min(k, count - 1)]);
        }
        params.emplace_back(max_id);
        if (auto done = (*stmt)->Execute(params); !done) {
          return done;
        }
        auto rows = (*stmt)->FetchAll();
        if (!rows) {
          return Fail(rows.error());
        }
        for (ResultRow& r : *rows) {
          auto id = r.Int(1);
          auto next_attempt = r.Int(2);
          if (!id || !next_attempt) {
            return Fail(!id ? id.error() : next_attempt.error());
          }
          pending[r.TakeStr(0)].push_back(Pending{*id, *next_attempt});
        }
        return {};
      });
  if (!listed) {
    return Fail(listed.error());
  }
  struct Run {
    size_t length = 0;
    size_t paced = 0;  // rows of the run that are sent (not of an unpaced type)
    bool broken = false;
    bool cut = false;  // ended at max_rows_per_room
  };
  std::unordered_map<std::string, Run> runs;
  RoomRuns out;
  out.kept.reserve(selected.size());
  for (OutboxRow& row : selected) {  // ascending ids: each room's rows in order
    Run& run = runs[row.room_id];
    const std::vector<Pending>& rows = pending[row.room_id];
    if (!run.broken && run.length < rows.size() && rows[run.length].id == row.id) {
      const bool paced = unpaced_types.count(row.event_type) == 0;
      if (max_rows_per_room > 0 && paced && run.paced == max_rows_per_room) {
        // The room has more due rows than a round may send it; ScheduleCutRooms spreads them.
        run.broken = true;
        run.cut = true;
        out.cut.push_back(CutRoom{row.room_id, rows[run.length - 1].id, run.paced});
        continue;
      }
      ++run.length;
      if (paced) ++run.paced;
      out.kept.push_back(std::move(row));
      continue;
    }
    if (run.cut) {
      continue;  // its head is claimed now; its other rows are scheduled, not pushed back
    }
    run.broken = true;
    if (rows.empty()) {
      continue;
    }
    const int64_t head_time = rows.front().next_attempt_at_ms;
    auto own =
        std::find_if(rows.begin(), rows.end(), [&row](const Pending& p) { return p.id == row.id; });
    // Only behind a head that is due itself: a head leased to a claim in flight (due at its
    // lease end) is published soon, and its rows must not wait for the lease to run out.
    if (own != rows.end() && own->next_attempt_at_ms < head_time && head_time <= now_ms &&
        (out.push_back.empty() || out.push_back.back().room_id != row.room_id)) {
      out.push_back.push_back(PushBack{row.room_id, head_time});
    }
  }
  return out;
}

// Applies KeepRoomRuns' push-backs to every unleased pending row of the room due before its
// head, not only the selected ones, so one pass fixes the room for good. Rows leased to a claim
// in flight (claim_token set) are left to their holder.
Result<void> PushBackRooms(MariaDbConnection& conn, const std::vector<PushBack>& rooms,
                           int64_t now_ms) {
  for (const PushBack& room : rooms) {
    auto stmt = conn.Prepared("push_back_room", sql::kPushBackRoom);
    if (!stmt) {
      return Fail(stmt.error());
    }
    std::vector<SqlValue> params = {room.head_next_attempt_at_ms, now_ms, room.room_id,
                                    room.head_next_attempt_at_ms};
    if (auto done = (*stmt)->Execute(params); !done) {
      return done;
    }
  }
  return {};
}

// Gives each cut room's due rows after its kept run a next_attempt_at_ms of their own, one
// room_pace_ms apart in id order (rows of unpaced types share the previous row's time), starting
// when the kept run will have been sent. Later claims then pass over them and take other rooms'
// rows; the room's head rule keeps its order whatever the times. Rows not due (a failed row
// waiting for its retry, rows already scheduled) and rows leased to a claim are left alone, so a
// busy room's backlog is rewritten once, not per claim.
Result<std::vector<PacedRoom>> ScheduleCutRooms(MariaDbConnection& conn,
                                                const std::vector<CutRoom>& rooms,
                                                const ClaimOptions& options) {
  std::vector<PacedRoom> paced;
  if (rooms.empty()) {
    return paced;
  }
  const std::string unpaced = nlohmann::json(options.unpaced_event_types).dump();
  for (const CutRoom& room : rooms) {
    auto start = conn.Prepared("pace_slot_start", sql::kPaceSlotStart);
    if (!start) {
      return Fail(start.error());
    }
    const int64_t last_kept_slot =
        options.now_ms + static_cast<int64_t>(room.kept_paced - 1) * options.room_pace_ms;
    const std::array<SqlValue, 1> start_params = {last_kept_slot};
    if (auto done = (*start)->Execute(start_params); !done) {
      return Fail(done.error());
    }
    auto stmt = conn.Prepared("pace_room", sql::kPaceRoom);
    if (!stmt) {
      return Fail(stmt.error());
    }
    const std::array<SqlValue, 6> params = {unpaced,      options.room_pace_ms, options.now_ms,
                                            room.room_id, room.last_kept_id,    options.now_ms};
    if (auto done = (*stmt)->Execute(params); !done) {
      return Fail(done.error());
    }
    const uint64_t scheduled = (*stmt)->AffectedRows();
    int64_t last_slot = 0;
    if (scheduled > 0) {
      auto read = conn.Prepared("pace_slot_read", sql::kPaceSlotRead);
      if (!read) {
        return Fail(read.error());
      }
      if (auto done = (*read)->Execute({}); !done) {
        return Fail(done.error());
      }
      auto rows = (*read)->FetchAll();
      if (!rows) {
        return Fail(rows.error());
      }
      if (rows->size() != 1) {
        return Fail(ErrorCode::kInternal, "pace: SELECT @room_outbox_slot returned " +
                                              std::to_string(rows->size()) + " rows");
      }
      auto slot = (*rows)[0].Int(0);
      if (!slot) {
        return Fail(slot.error());
      }
      last_slot = *slot;
    }
    paced.push_back(PacedRoom{room.room_id, scheduled, last_slot});
  }
  return paced;
}

// Leases `rows` (locked by the current transaction) to claim.token until claim.lease_until_ms.
Result<void> Lease(MariaDbConnection& conn, const std::vector<OutboxRow>& rows, const Claim& claim,
                   int64_t now_ms) {
  uint64_t leased = 0;
  auto updated =
      ForEachChunk(rows.size(), [&](size_t size, size_t at, size_t count) -> Result<void> {
        auto stmt = conn.Prepared("lease_" + std::to_string(size),
                                  std::string(sql::kLeasePrefix) + Placeholders(size));
        if (!stmt) {
          return Fail(stmt.error());
        }
        std::vector<SqlValue> params = {claim.token, claim.lease_until_ms, now_ms};
        params.reserve(size + 3);
        for (size_t k = 0; k < size; ++k) {
          params.emplace_back(rows[at + std::min(k, count - 1)].id);
        }
        if (auto done = (*stmt)->Execute(params); !done) {
          return done;
        }
        leased += (*stmt)->AffectedRows();
        return {};
      });
  if (!updated) {
    return updated;
  }
  if (leased != rows.size()) {
    // This transaction holds the row locks; a mismatch is a bug worth stopping on.
    return Fail(ErrorCode::kInternal, "lease: updated " + std::to_string(leased) + " of " +
                                          std::to_string(rows.size()) + " locked rows");
  }
  return {};
}

// Collects the first failure of the caller's statements: once one failed the transaction is

}  // namespace

Result<Claim> MariaDbOutboxStore::ClaimDue(const ClaimOptions& options) {
  if (options.lease_ms <= 0) {
    return Fail(ErrorCode::kInvalidArgument,
                "ClaimDue: lease_ms must be positive, got " + std::to_string(options.lease_ms));
  }
  if (options.limit == 0) {
    return Claim{};
  }
  return WithConnection([&](MariaDbConnection& conn) -> Result<Claim> {
    return InTransaction(conn, [&]() -> Result<Claim> {
      auto selected = SelectDue(conn, options);
      if (!selected) {
        return Fail(selected.error());
      }
      const bool more_due = selected->size() >= options.limit;
      std::vector<CutRoom> cut_rooms;
      const std::set<std::string, std::less<>> unpaced_types(options.unpaced_event_types.begin(),
                                                             options.unpaced_event_types.end());
      const size_t max_rows_per_room =
          options.room_pace_ms > 0 ? options.max_rows_per_room : size_t{0};
      // Per-room order: when every selected row was left out and some rooms were pushed back
      // behind their heads, select again: those heads now sort first.
      constexpr int kMaxPasses = 3;
      for (int pass = 1; options.per_room_order && !selected->empty(); ++pass) {
        auto runs = KeepRoomRuns(conn, std::move(*selected), options.now_ms, max_rows_per_room,
                                 unpaced_types);
        if (!runs) {
          return Fail(runs.error());
        }
        if (auto pushed = PushBackRooms(conn, runs->push_back, options.now_ms); !pushed) {
          return Fail(pushed.error());
        }
        cut_rooms = std::move(runs->cut);
        selected = std::move(runs->kept);
        if (!selected->empty() || runs->push_back.empty() || pass == kMaxPasses) {
          break;
        }
        selected = SelectDue(conn, options);
        if (!selected) {
          return Fail(selected.error());
        }
      }
      if (selected->empty()) {
        Claim none;
        none.more_due = more_due;
        return none;
      }
      Claim claim;
      claim.more_due = more_due || !cut_rooms.empty();
      claim.token = NewClaimToken();
      claim.lease_until_ms = options.now_ms + options.lease_ms;
      if (auto leased = Lease(conn, *selected, claim, options.now_ms); !leased) {
        return Fail(leased.error());
      }
      auto paced = ScheduleCutRooms(conn, cut_rooms, options);
      if (!paced) {
        return Fail(paced.error());
      }
      claim.paced_rooms = std::move(*paced);
      claim.rows = std::move(*selected);
      return claim;
    });
  });
}

}  // namespace room_outbox
