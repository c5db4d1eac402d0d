#include "store/outbox_insert.h"

#include <array>
#include <string>

namespace room_outbox::internal {
namespace {

constexpr size_t kParamsPerRow = 10;

size_t ValueBytes(const NewOutboxRow& row) {
  return row.event_id.size() + row.event_type.size() + row.room_id.size() + row.command_id.size() +
         row.request_id.size() + row.envelope.size();
}

// Stores the id of the current row of `stmt` (columns id_column, id_column + 1: id, event_id) in
// ids[first + k] for the row k of `rows` with that event_id. Rows come in insert order, so the
// next unmatched row is tried first; a row that came back in another place is still matched to
// its own id.
core::Result<void> MatchId(const core::PreparedStatement& stmt, size_t id_column,
                           std::span<const NewOutboxRow> rows, std::vector<int64_t>& ids,
                           size_t first, size_t returned) {
  auto id = stmt.IntAt(id_column);
  auto event_id = stmt.TextAt(id_column + 1);
  if (!id || !event_id) {
    return core::Fail(!id ? id.error() : event_id.error());
  }
  size_t at = returned;
  if (at >= rows.size() || rows[at].event_id != *event_id) {
    at = 0;
    while (at < rows.size() && (rows[at].event_id != *event_id || ids[first + at] != 0)) {
      ++at;
    }
  }
  if (at == rows.size() || *id <= 0) {
    return core::Fail(ErrorCode::kInternal, stmt.name() + ": returned a row that was not inserted");
  }
  ids[first + at] = *id;
  return {};
}

core::Result<void> CheckCount(const core::PreparedStatement& stmt, size_t returned, size_t rows) {
  if (returned != rows) {
    return core::Fail(ErrorCode::kInternal, stmt.name() + ": returned " + std::to_string(returned) +
                                                " ids for " + std::to_string(rows) + " rows");
  }
  return {};
}

// The RETURNING rows (id, event_id) of `chunk`, stored in ids[first ...] in the chunk's order.
core::Result<void> ReadReturnedIds(core::PreparedStatement& stmt,
                                   std::span<const NewOutboxRow> chunk, std::vector<int64_t>& ids,
                                   size_t first) {
  size_t returned = 0;
  while (true) {
    auto more = stmt.Next();
    if (!more) {
      return core::Fail(more.error());
    }
    if (!*more) {
      return CheckCount(stmt, returned, chunk.size());
    }
    if (auto matched = MatchId(stmt, 0, chunk, ids, first, returned); !matched) {
      return matched;
    }
    ++returned;
  }
}

// Binds the values of `chunk` into `refs` (which must have room for them).
std::span<const core::SqlRef> BindRows(std::span<const NewOutboxRow> chunk, std::string_view token,
                                       int64_t lease_ms, std::span<core::SqlRef> refs) {
  size_t k = 0;
  for (const NewOutboxRow& row : chunk) {
    const bool leased = !row.published && !token.empty();
    refs[k++] = row.event_id;
    refs[k++] = row.event_type;
    refs[k++] = row.room_id;
    refs[k++] = row.command_id;
    refs[k++] = row.request_id;
    refs[k++] = row.envelope;
    refs[k++] = std::string_view(row.published ? "published" : "pending");
    refs[k++] = leased ? lease_ms : int64_t{0};
    refs[k++] = leased ? core::SqlRef{token} : core::SqlRef{};
    refs[k++] = int64_t{row.published ? 1 : 0};
  }
  return refs.first(k);
}

}  // namespace

size_t OutboxInsertChunk(std::span<const NewOutboxRow> rows) {
  size_t n = 0;
  size_t bytes = 0;
  while (n < rows.size() && n < kMaxRowsPerOutboxInsert) {
    const size_t row_bytes = ValueBytes(rows[n]);
    if (n > 0 && bytes + row_bytes > kMaxBytesPerOutboxInsert) {
      break;
    }
    bytes += row_bytes;
    ++n;
  }
  return n;
}

core::Result<void> InsertOutboxRows(core::MariaDbConnection& conn,
                                    std::span<const NewOutboxRow> rows, std::string_view token,
                                    int64_t lease_ms, std::vector<int64_t>& ids) {
  std::array<core::SqlRef, kMaxRowsPerOutboxInsert * kParamsPerRow> refs;
  const bool returning = conn.dialect().returning;
  if (returning) {
    ids.reserve(ids.size() + rows.size());
  }
  while (!rows.empty()) {
    const std::span<const NewOutboxRow> chunk = rows.first(OutboxInsertChunk(rows));
    auto stmt = conn.Prepared(core::sql::Stmt::kInsertOutbox, chunk.size());
    if (!stmt) {
      return core::Fail(stmt.error());
    }
    if (auto inserted = (*stmt)->ExecuteRefs(BindRows(chunk, token, lease_ms, refs)); !inserted) {
      return inserted;
    }
    if (returning) {
      const size_t first = ids.size();
      ids.resize(first + chunk.size(), 0);
      if (auto read = ReadReturnedIds(**stmt, chunk, ids, first); !read) {
        return read;
      }
    }
    rows = rows.subspan(chunk.size());
  }
  return {};
}

core::Result<void> ReadBackCommit(core::MariaDbConnection& conn, const Command& command,
                                  std::span<const NewOutboxRow> rows, bool check,
                                  CommitWrite& write) {
  auto stmt = check ? conn.Prepared(core::sql::Stmt::kCommitReadBackChecked)
                    : conn.Prepared(core::sql::Stmt::kCommitReadBack);
  if (!stmt) {
    return core::Fail(stmt.error());
  }
  const std::array<core::SqlRef, 3> params = {command.room_id, command.command_id,
                                              command.command_id};
  if (auto done = (*stmt)->ExecuteRefs(check ? std::span(params) : std::span(params).last(1));
      !done) {
    return done;
  }
  write.row_ids.assign(rows.size(), 0);
  size_t returned = 0;
  for (bool first_row = true;; first_row = false) {
    auto more = (*stmt)->Next();
    if (!more || !*more) {
      return !more ? core::Fail(more.error())
             : first_row
                 ? core::Fail(ErrorCode::kInternal, (*stmt)->name() + ": no command log row")
                 : CheckCount(**stmt, returned, rows.size());
    }
    auto now = (*stmt)->IntAt(0);
    auto earlier = (*stmt)->IntAt(1);
    auto id = (*stmt)->IntAt(2);
    if (!now || !earlier || !id) {
      return core::Fail(!now ? now.error() : !earlier ? earlier.error() : id.error());
    }
    write.server_now_ms = *now;
    write.earlier_pending = *earlier != 0;
    if (*id == 0) {
      continue;  // the NULLs of a command without events
    }
    if (auto matched = MatchId(**stmt, 2, rows, write.row_ids, 0, returned); !matched) {
      return matched;
    }
    ++returned;
  }
}

}  // namespace room_outbox::internal
