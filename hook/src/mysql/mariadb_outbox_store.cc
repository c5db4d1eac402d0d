#include "mysql/mariadb_outbox_store.h"

#include <algorithm>
#include <array>
#include <exception>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <unordered_map>
#include <utility>

#include "claim_token.h"

namespace room_outbox {
namespace {

constexpr std::string_view kInsertCommandLog =
    "INSERT INTO room_command_log (command_id, room_id, command_type, request_id, room_seq, "
    "payload, created_at_ms) VALUES (?, ?, ?, ?, ?, ?, ?)";

constexpr std::string_view kInsertOutbox =
    "INSERT INTO room_outbox (event_id, event_type, room_id, command_id, request_id, envelope, "
    "status, retry_count, next_attempt_at_ms, claim_token, created_at_ms, updated_at_ms) "
    "VALUES (?, ?, ?, ?, ?, ?, 'pending', 0, ?, ?, ?, ?)";

constexpr std::string_view kHasEarlierPending =
    "SELECT 1 FROM room_outbox WHERE room_id = ? AND status = 'pending' AND id < ? LIMIT 1";

}  // namespace

// Walks idx_pending_due (status, next_attempt_at_ms, id) in order: no filesort, and rows that
// another claim holds are skipped instead of waited for. For a table of a few rows the optimizer
// reads them all and sorts them instead, which is cheaper there. Forcing the index was measured
// (make bench, rows 1a') to slow a 50k-row backlog drain by about a third, so it is not forced.
const std::string_view kClaimDueSql =
    "SELECT id, event_id, event_type, room_id, envelope, retry_count, created_at_ms "
    "FROM room_outbox WHERE status = 'pending' AND next_attempt_at_ms <= ? "
    "ORDER BY next_attempt_at_ms, id LIMIT ? FOR UPDATE SKIP LOCKED";

// The same walk, leaving out rows whose room's oldest pending row is not due (failed and
// waiting for its retry, or leased to a publish in flight). Without this a room blocked behind
// its head could fill every batch with rows that cannot be claimed and starve all other rooms.
// The head lookup is one dive into idx_room_status (room_id, status, id) per row.
const std::string_view kClaimDueRoomHeadsSql =
    "SELECT o.id, o.event_id, o.event_type, o.room_id, o.envelope, o.retry_count, "
    "o.created_at_ms FROM room_outbox o "
    "WHERE o.status = 'pending' AND o.next_attempt_at_ms <= ? "
    "AND (SELECT h.next_attempt_at_ms FROM room_outbox h FORCE INDEX (idx_room_status) "
    "WHERE h.room_id = o.room_id "
    "AND h.status = 'pending' ORDER BY h.id LIMIT 1) <= ? "
    "ORDER BY o.next_attempt_at_ms, o.id LIMIT ? FOR UPDATE SKIP LOCKED";

namespace {

constexpr std::string_view kMarkFailed =
    "UPDATE room_outbox SET retry_count = retry_count + 1, last_error = ?, "
    "next_attempt_at_ms = ?, updated_at_ms = ?, claim_token = NULL "
    "WHERE id = ? AND claim_token = ? AND status = 'pending'";

// Served by idx_pending_due: the cost follows the pending rows, not the table.
constexpr std::string_view kStats =
    "SELECT COUNT(*), COALESCE(MIN(created_at_ms), 0) FROM room_outbox "
    "WHERE status = 'pending'";

// Placeholder-list sizes for id and room lists. A list is cut into chunks of these sizes and a
// short chunk is padded by repeating its last value (harmless inside IN), so each operation has
// at most this many statement shapes per connection.
constexpr std::array<size_t, 5> kListSizes = {1, 8, 32, 128, 512};

size_t ListSizeFor(size_t remaining) {
  for (size_t size : kListSizes) {
    if (size >= remaining) {
      return size;
    }
  }
  return kListSizes.back();
}

std::string Placeholders(size_t n) {
  std::string out = "(";
  for (size_t i = 0; i < n; ++i) {
    out += i == 0 ? "?" : ", ?";
  }
  return out + ")";
}

// Calls chunk(size, offset, count) for consecutive slices of n items, each bound through a
// placeholder list of `size` >= count entries.
template <class Chunk>
Result<void> ForEachChunk(size_t n, Chunk&& chunk) {
  for (size_t at = 0; at < n;) {
    const size_t size = ListSizeFor(n - at);
    const size_t count = std::min(size, n - at);
    if (auto done = chunk(size, at, count); !done) {
      return done;
    }
    at += count;
  }
  return {};
}

// Locks the due rows nobody else holds, in id order.
Result<std::vector<OutboxRow>> SelectDue(MariaDbConnection& conn, const ClaimOptions& options) {
  auto stmt = options.per_room_order ? conn.Prepared("claim_due_room_heads", kClaimDueRoomHeadsSql)
                                     : conn.Prepared("claim_due", kClaimDueSql);
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
            "SELECT room_id, id, next_attempt_at_ms FROM room_outbox WHERE status = 'pending' "
            "AND room_id IN " +
                Placeholders(size) + " AND id <= ? ORDER BY room_id, id");
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
    auto stmt = conn.Prepared("push_back_room",
                              "UPDATE room_outbox SET next_attempt_at_ms = ?, updated_at_ms = ? "
                              "WHERE room_id = ? AND status = 'pending' AND "
                              "next_attempt_at_ms < ? AND claim_token IS NULL");
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
    auto start = conn.Prepared("pace_slot_start", "SET @room_outbox_slot = ?");
    if (!start) {
      return Fail(start.error());
    }
    const int64_t last_kept_slot =
        options.now_ms + static_cast<int64_t>(room.kept_paced - 1) * options.room_pace_ms;
    const std::array<SqlValue, 1> start_params = {last_kept_slot};
    if (auto done = (*start)->Execute(start_params); !done) {
      return Fail(done.error());
    }
    auto stmt = conn.Prepared(
        "pace_room",
        "UPDATE room_outbox SET next_attempt_at_ms = (@room_outbox_slot := @room_outbox_slot + "
        "IF(JSON_CONTAINS(?, JSON_QUOTE(event_type)), 0, ?)), updated_at_ms = ? "
        "WHERE room_id = ? AND status = 'pending' AND id > ? AND next_attempt_at_ms <= ? "
        "AND claim_token IS NULL ORDER BY id");
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
      auto read = conn.Prepared("pace_slot_read", "SELECT @room_outbox_slot");
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
        auto stmt = conn.Prepared(
            "lease_" + std::to_string(size),
            "UPDATE room_outbox SET claim_token = ?, next_attempt_at_ms = ?, updated_at_ms = ? "
            "WHERE status = 'pending' AND id IN " +
                Placeholders(size));
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
// doomed, whatever the callback returns.
class CallerTransaction final : public Transaction {
 public:
  explicit CallerTransaction(MariaDbConnection& conn) : conn_(conn) {}

  Status Execute(std::string_view sql, const std::vector<SqlValue>& params) override {
    if (failure_) {
      return *failure_;
    }
    auto stmt = conn_.Prepare("caller_statement", sql);
    if (!stmt) {
      return Record(stmt.error());
    }
    if (auto done = (*stmt)->Execute(params); !done) {
      return Record(done.error());
    }
    // A caller's SELECT is allowed; its rows are read and dropped.
    if (auto rows = (*stmt)->FetchAll(); !rows) {
      return Record(rows.error());
    }
    return Status();
  }

  const std::optional<Error>& failure() const { return failure_; }

 private:
  Status Record(Error error) {
    failure_ = error;
    return error;
  }

  MariaDbConnection& conn_;
  std::optional<Error> failure_;
};

}  // namespace

std::string TruncateUtf8(std::string_view text, size_t max_chars) {
  std::string out;
  out.reserve(std::min(text.size(), max_chars * 4));
  size_t chars = 0;
  size_t i = 0;
  while (i < text.size() && chars < max_chars) {
    const auto lead = static_cast<unsigned char>(text[i]);
    size_t len = 0;
    unsigned char min_second = 0x80;
    unsigned char max_second = 0xBF;
    if (lead < 0x80) {
      len = 1;
    } else if (lead >= 0xC2 && lead <= 0xDF) {
      len = 2;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
      len = 3;
      if (lead == 0xE0) min_second = 0xA0;  // no overlong forms
      if (lead == 0xED) max_second = 0x9F;  // no UTF-16 surrogates
    } else if (lead >= 0xF0 && lead <= 0xF4) {
      len = 4;
      if (lead == 0xF0) min_second = 0x90;
      if (lead == 0xF4) max_second = 0x8F;  // nothing above U+10FFFF
    }
    bool valid = len > 0 && i + len <= text.size();
    for (size_t k = 1; valid && k < len; ++k) {
      const auto c = static_cast<unsigned char>(text[i + k]);
      const unsigned char lo = k == 1 ? min_second : 0x80;
      const unsigned char hi = k == 1 ? max_second : 0xBF;
      valid = c >= lo && c <= hi;
    }
    if (valid) {
      out.append(text.substr(i, len));
      i += len;
    } else {
      out += '?';
      i += 1;
    }
    ++chars;
  }
  return out;
}

MariaDbOutboxStore::MariaDbOutboxStore(MysqlOptions options) : options_(std::move(options)) {}

MariaDbOutboxStore::~MariaDbOutboxStore() = default;

std::unique_ptr<MariaDbOutboxStore> MakeMariaDbOutboxStore(const MysqlOptions& options) {
  return std::make_unique<MariaDbOutboxStore>(options);
}

uint64_t MariaDbOutboxStore::connection_id() const { return conn_ ? conn_->ConnectionId() : 0; }

Result<void> MariaDbOutboxStore::Connect() {
  auto conn = Live();
  if (!conn) {
    return Fail(conn.error());
  }
  return {};
}

Result<MariaDbConnection*> MariaDbOutboxStore::Live() {
  if (conn_ && std::chrono::steady_clock::now() - last_used_ >= kPingAfterIdle) {
    // Nothing is in flight between calls, so replacing a connection the server (or a
    // firewall) closed while idle loses nothing.
    if (!conn_->Ping()) {
      conn_.reset();
    }
  }
  if (!conn_) {
    auto conn = MariaDbConnection::Connect(options_);
    if (!conn) {
      return Fail(conn.error());
    }
    conn_ = std::move(*conn);
  }
  last_used_ = std::chrono::steady_clock::now();
  return conn_.get();
}

template <class Body>
auto MariaDbOutboxStore::WithConnection(Body&& body)
    -> decltype(body(std::declval<MariaDbConnection&>())) {
  auto conn = Live();
  if (!conn) {
    return Fail(conn.error());
  }
  drop_after_call_ = false;
  auto result = body(**conn);
  if ((!result && result.error().code == ErrorCode::kUnavailable) || drop_after_call_) {
    conn_.reset();
  } else {
    last_used_ = std::chrono::steady_clock::now();
  }
  drop_after_call_ = false;
  return result;
}

void MariaDbOutboxStore::Abort(MariaDbConnection& conn) {
  if (!conn.Rollback()) {
    // Closing the connection makes the server roll the transaction back.
    drop_after_call_ = true;
  }
}

template <class Body>
auto MariaDbOutboxStore::InTransaction(MariaDbConnection& conn, Body&& body) -> decltype(body()) {
  if (auto begun = conn.Begin(); !begun) {
    return Fail(begun.error());
  }
  auto result = body();
  if (!result) {
    Abort(conn);
    return result;
  }
  if (auto committed = conn.Commit(); !committed) {
    Abort(conn);
    return Fail(committed.error());
  }
  return result;
}

Result<CommitWrite> MariaDbOutboxStore::CommitCommand(const CommitRequest& request,
                                                      const CallerStatements& caller_statements) {
  return WithConnection([&](MariaDbConnection& conn) -> Result<CommitWrite> {
    if (auto begun = conn.Begin(); !begun) {
      return Fail(begun.error());
    }
    auto fail = [&](Error error) -> Result<CommitWrite> {
      Abort(conn);
      return Fail(std::move(error));
    };

    auto log = conn.Prepared("insert_command_log", kInsertCommandLog);
    if (!log) {
      return fail(log.error());
    }
    const Command& command = request.command;
    const std::array<SqlValue, 7> log_params = {
        command.command_id, command.room_id, command.command_type, command.request_id,
        command.room_seq,   command.payload, request.now_ms};
    if (auto inserted = (*log)->Execute(log_params); !inserted) {
      if (inserted.error().code == ErrorCode::kAlreadyExists) {
        // uk_command_id is the only unique key a command log insert can hit: the command was
        // committed before, so nothing is written again.
        Abort(conn);
        return CommitWrite{.duplicate = true, .row_ids = {}};
      }
      return fail(inserted.error());
    }

    CommitWrite write;
    write.row_ids.reserve(request.rows.size());
    auto outbox = conn.Prepared("insert_outbox", kInsertOutbox);
    if (!outbox) {
      return fail(outbox.error());
    }
    const SqlValue token = request.token.empty() ? SqlValue{} : SqlValue{request.token};
    for (const NewOutboxRow& row : request.rows) {
      const std::array<SqlValue, 10> params = {
          row.event_id, row.event_type,         row.room_id, row.command_id, row.request_id,
          row.envelope, request.lease_until_ms, token,       request.now_ms, request.now_ms};
      if (auto inserted = (*outbox)->Execute(params); !inserted) {
        return fail(inserted.error());
      }
      write.row_ids.push_back(static_cast<int64_t>((*outbox)->InsertId()));
    }

    if (caller_statements) {
      CallerTransaction tx(conn);
      Status status;
      try {
        status = caller_statements(tx);
      } catch (const std::exception& e) {
        return fail(
            Error{ErrorCode::kInternal, std::string("caller statements threw: ") + e.what()});
      } catch (...) {
        return fail(Error{ErrorCode::kInternal, "caller statements threw"});
      }
      if (!status.ok()) {
        return fail(status.error());
      }
      if (tx.failure()) {
        // The callback went on after a failed statement; the commit is still all or nothing.
        return fail(*tx.failure());
      }
    }

    if (auto committed = conn.Commit(); !committed) {
      // Lost during COMMIT the outcome is unknown; a retry with the same command_id reports
      // a duplicate if it did commit.
      return fail(committed.error());
    }
    return write;
  });
}

Result<bool> MariaDbOutboxStore::HasEarlierPending(const std::string& room_id, int64_t row_id) {
  return WithConnection([&](MariaDbConnection& conn) -> Result<bool> {
    auto stmt = conn.Prepared("has_earlier_pending", kHasEarlierPending);
    if (!stmt) {
      return Fail(stmt.error());
    }
    const std::array<SqlValue, 2> params = {room_id, row_id};
    if (auto done = (*stmt)->Execute(params); !done) {
      return Fail(done.error());
    }
    auto rows = (*stmt)->FetchAll();
    if (!rows) {
      return Fail(rows.error());
    }
    return !rows->empty();
  });
}

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

Result<size_t> MariaDbOutboxStore::UpdateHeld(MariaDbConnection& conn, std::string_view name,
                                              std::string_view set_clause,
                                              std::vector<SqlValue> set_params,
                                              const std::string& token,
                                              std::span<const int64_t> ids) {
  auto run = [&]() -> Result<size_t> {
    size_t total = 0;
    auto updated =
        ForEachChunk(ids.size(), [&](size_t size, size_t at, size_t count) -> Result<void> {
          auto stmt = conn.Prepared(std::string(name) + "_" + std::to_string(size),
                                    "UPDATE room_outbox SET " + std::string(set_clause) +
                                        " WHERE claim_token = ? AND status = 'pending' AND id IN " +
                                        Placeholders(size));
          if (!stmt) {
            return Fail(stmt.error());
          }
          std::vector<SqlValue> params = set_params;
          params.reserve(set_params.size() + 1 + size);
          params.emplace_back(token);
          for (size_t k = 0; k < size; ++k) {
            params.emplace_back(ids[at + std::min(k, count - 1)]);
          }
          if (auto done = (*stmt)->Execute(params); !done) {
            return done;
          }
          total += static_cast<size_t>((*stmt)->AffectedRows());
          return {};
        });
    if (!updated) {
      return Fail(updated.error());
    }
    return total;
  };
  if (ids.size() <= kListSizes.back()) {
    return run();  // one statement is atomic on its own
  }
  return InTransaction(conn, run);
}

Result<size_t> MariaDbOutboxStore::MarkPublished(const std::string& token,
                                                 std::span<const int64_t> ids, int64_t now_ms) {
  if (ids.empty()) {
    return 0;
  }
  return WithConnection([&](MariaDbConnection& conn) {
    return UpdateHeld(conn, "mark_published",
                      "status = 'published', last_error = NULL, published_at_ms = ?, "
                      "updated_at_ms = ?, claim_token = NULL",
                      {now_ms, now_ms}, token, ids);
  });
}

Result<size_t> MariaDbOutboxStore::Release(const std::string& token, std::span<const int64_t> ids,
                                           int64_t now_ms) {
  if (ids.empty()) {
    return 0;
  }
  return WithConnection([&](MariaDbConnection& conn) {
    return UpdateHeld(conn, "release",
                      "next_attempt_at_ms = ?, claim_token = NULL, updated_at_ms = ?",
                      {now_ms, now_ms}, token, ids);
  });
}

Result<size_t> MariaDbOutboxStore::MarkFailed(const std::string& token,
                                              std::span<const FailedAttempt> attempts,
                                              int64_t now_ms) {
  if (attempts.empty()) {
    return 0;
  }
  return WithConnection([&](MariaDbConnection& conn) {
    auto run = [&]() -> Result<size_t> {
      auto stmt = conn.Prepared("mark_failed", kMarkFailed);
      if (!stmt) {
        return Fail(stmt.error());
      }
      size_t total = 0;
      for (const FailedAttempt& attempt : attempts) {
        const std::array<SqlValue, 5> params = {TruncateUtf8(attempt.error, kMaxLastErrorChars),
                                                attempt.next_attempt_at_ms, now_ms, attempt.id,
                                                token};
        if (auto done = (*stmt)->Execute(params); !done) {
          return Fail(done.error());
        }
        total += static_cast<size_t>((*stmt)->AffectedRows());
      }
      return total;
    };
    if (attempts.size() == 1) {
      return run();
    }
    return InTransaction(conn, run);
  });
}

Result<OutboxStats> MariaDbOutboxStore::Stats() {
  return WithConnection([&](MariaDbConnection& conn) -> Result<OutboxStats> {
    auto stmt = conn.Prepared("stats", kStats);
    if (!stmt) {
      return Fail(stmt.error());
    }
    if (auto done = (*stmt)->Execute({}); !done) {
      return Fail(done.error());
    }
    auto rows = (*stmt)->FetchAll();
    if (!rows) {
      return Fail(rows.error());
    }
    if (rows->size() != 1) {
      return Fail(ErrorCode::kInternal,
                  "stats: expected one row, got " + std::to_string(rows->size()));
    }
    auto pending = (*rows)[0].Int(0);
    auto oldest = (*rows)[0].Int(1);
    if (!pending || !oldest) {
      return Fail(!pending ? pending.error() : oldest.error());
    }
    return OutboxStats{.pending = *pending, .oldest_pending_created_at_ms = *oldest};
  });
}

}  // namespace room_outbox
