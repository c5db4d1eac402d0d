#include "mysql/outbox_insert.h"

#include <array>
#include <string>

#include "core/mysql/outbox_sql.h"

namespace room_outbox {
namespace {

constexpr size_t kParamsPerRow = 10;

// The statement for n rows: its name and text, built once per process.
struct Shape {
  std::string name;
  std::string sql;
};

const Shape& ShapeFor(size_t rows) {
  static const std::array<Shape, kMaxRowsPerOutboxInsert + 1> shapes = [] {
    std::array<Shape, kMaxRowsPerOutboxInsert + 1> out;
    for (size_t n = 1; n <= kMaxRowsPerOutboxInsert; ++n) {
      out[n].name = "insert_outbox_rows_" + std::to_string(n);
      out[n].sql = sql::kInsertOutboxHead;
      for (size_t i = 0; i < n; ++i) {
        out[n].sql += i == 0 ? "" : ", ";
        out[n].sql += sql::kInsertOutboxRow;
      }
      out[n].sql += sql::kInsertOutboxReturning;
    }
    return out;
  }();
  return shapes[rows];
}

size_t ValueBytes(const NewOutboxRow& row) {
  return row.event_id.size() + row.event_type.size() + row.room_id.size() + row.command_id.size() +
         row.request_id.size() + row.envelope.size();
}

// The RETURNING rows (id, event_id) of `chunk`, stored in ids[first ...] in the chunk's order.
// The server returns them in insert order; the event_id confirms each one, and a row that came
// back in another place is still matched to its own id.
Result<void> ReadIds(PreparedStatement& stmt, std::span<const NewOutboxRow> chunk,
                     std::vector<int64_t>& ids, size_t first) {
  size_t returned = 0;
  while (true) {
    auto more = stmt.Next();
    if (!more) {
      return Fail(more.error());
    }
    if (!*more) {
      break;
    }
    auto id = stmt.IntAt(0);
    auto event_id = stmt.TextAt(1);
    if (!id || !event_id) {
      return Fail(!id ? id.error() : event_id.error());
    }
    size_t at = returned;
    if (at >= chunk.size() || chunk[at].event_id != *event_id) {
      at = 0;
      while (at < chunk.size() && (chunk[at].event_id != *event_id || ids[first + at] != 0)) {
        ++at;
      }
    }
    if (at == chunk.size() || *id <= 0) {
      return Fail(ErrorCode::kInternal, stmt.name() + ": returned a row that was not inserted");
    }
    ids[first + at] = *id;
    ++returned;
  }
  if (returned != chunk.size()) {
    return Fail(ErrorCode::kInternal, stmt.name() + ": returned " + std::to_string(returned) +
                                          " ids for " + std::to_string(chunk.size()) + " rows");
  }
  return {};
}

// Binds the values of `chunk` into `refs` (which must have room for them).
std::span<const SqlRef> BindRows(std::span<const NewOutboxRow> chunk, std::string_view token,
                                 int64_t lease_ms, std::span<SqlRef> refs) {
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
    refs[k++] = leased ? SqlRef{token} : SqlRef{};
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

Result<void> InsertOutboxRows(MariaDbConnection& conn, std::span<const NewOutboxRow> rows,
                              std::string_view token, int64_t lease_ms, std::vector<int64_t>& ids) {
  std::array<SqlRef, kMaxRowsPerOutboxInsert * kParamsPerRow> refs;
  ids.reserve(ids.size() + rows.size());
  while (!rows.empty()) {
    const std::span<const NewOutboxRow> chunk = rows.first(OutboxInsertChunk(rows));
    const Shape& shape = ShapeFor(chunk.size());
    auto stmt = conn.Prepared(shape.name, shape.sql);
    if (!stmt) {
      return Fail(stmt.error());
    }
    if (auto inserted = (*stmt)->ExecuteRefs(BindRows(chunk, token, lease_ms, refs)); !inserted) {
      return inserted;
    }
    const size_t first = ids.size();
    ids.resize(first + chunk.size(), 0);
    if (auto read = ReadIds(**stmt, chunk, ids, first); !read) {
      return read;
    }
    rows = rows.subspan(chunk.size());
  }
  return {};
}

}  // namespace room_outbox
