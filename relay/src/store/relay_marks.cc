// MariaDbRelayStore: the writes of an attempt (MarkPublished, MarkFailed, MarkParked). Each writes
// its rows first, then brings their rooms back on the room schedule, in one transaction: a claim
// that read a room's head in flight before the mark committed set the room's due time to that
// lease's end, and the mark, whose room write waits for that claim's lock on the room, brings it
// back. Rows before rooms, rooms in room_id order: the order the listing locks rooms in, so the two
// cannot deadlock.
#include <algorithm>
#include <array>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/mysql/id_lists.h"
#include "core/mysql/mysql_error.h"
#include "core/mysql/outbox_sql.h"
#include "core/utf8.h"
#include "store/mariadb_relay_store.h"

namespace room_outbox::relay {
namespace {

// A mark runs its transaction again at once, up to this many times in all, when a deadlock rolled
// it back: its room writes and a claim's listing (or another relay's marks) lock the same rooms.
// A lock wait timeout is not run again (it waited its whole lock wait already).
constexpr int kMarkAttempts = 3;

// What a mark makes of a room: the statement (kRoomsProgress, kRoomsRetry) and its delay.
using RoomNext = std::pair<const core::sql::Statement*, int64_t>;

// The room of each of `ids` (kRowRooms), by row id.
core::Result<std::map<int64_t, std::string>> RoomsOfRows(core::MariaDbConnection& conn,
                                                         std::span<const int64_t> ids) {
  std::map<int64_t, std::string> rooms;
  auto read = core::ForEachChunk(ids.size(),
                                 [&](size_t size, size_t at, size_t count) -> core::Result<void> {
                                   auto stmt = conn.Prepared(core::sql::Stmt::kRowRooms, size);
                                   if (!stmt) return core::Fail(stmt.error());
                                   std::vector<core::SqlValue> params;
                                   for (size_t k = 0; k < size; ++k)
                                     params.emplace_back(ids[at + std::min(k, count - 1)]);
                                   if (auto done = (*stmt)->Execute(params); !done) return done;
                                   auto rows = (*stmt)->FetchAll();
                                   if (!rows) return core::Fail(rows.error());
                                   for (core::ResultRow& r : *rows) {
                                     auto id = r.Int(0);
                                     if (!id) return core::Fail(id.error());
                                     rooms[*id] = r.TakeStr(1);
                                   }
                                   return {};
                                 });
  if (!read) return core::Fail(read.error());
  return rooms;
}

// Runs `next` for `rooms` (ascending), chunked.
core::Result<void> WriteRooms(core::MariaDbConnection& conn, const RoomNext& next,
                              const std::vector<std::string>& rooms) {
  return core::ForEachChunk(rooms.size(),
                            [&](size_t size, size_t at, size_t count) -> core::Result<void> {
                              auto stmt = conn.Prepared(*next.first, size);
                              if (!stmt) return core::Fail(stmt.error());
                              std::vector<core::SqlValue> params = {next.second};
                              for (size_t k = 0; k < size; ++k) {
                                params.emplace_back(rooms[at + std::min(k, count - 1)]);
                              }
                              return (*stmt)->Execute(params);
                            });
}

// Writes each room's next due time in room_id order, consecutive rooms of the same next in one
// statement.
core::Result<void> WriteRoomsInOrder(core::MariaDbConnection& conn,
                                     const std::map<std::string, RoomNext>& rooms) {
  std::vector<std::string> run;
  const RoomNext* run_next = nullptr;
  for (const auto& [room, next] : rooms) {
    if (run_next != nullptr && *run_next != next) {
      if (auto written = WriteRooms(conn, *run_next, run); !written) return written;
      run.clear();
    }
    run.push_back(room);
    run_next = &next;
  }
  if (run.empty()) return {};
  return WriteRooms(conn, *run_next, run);
}

// The history placeholders of a failure mark (kMarkFailed, kMarkParked): entries (0 | 1),
// waited_ms, entry rest (NULL without a note).
std::array<core::SqlValue, 3> EntryParams(const AttemptNote& note) {
  if (note.empty()) return {int64_t{0}, int64_t{0}, core::SqlValue{}};
  return {int64_t{1}, note.WaitedMs(), note.text};
}

// kRelayMarkPublished over `ids` with their `notes` (one each), chunked.
core::Result<size_t> MarkPublishedNoted(core::MariaDbConnection& conn, const std::string& token,
                                        std::span<const int64_t> ids,
                                        std::span<const AttemptNote> notes) {
  size_t total = 0;
  auto marked = core::ForEachChunk(
      ids.size(), [&](size_t size, size_t at, size_t count) -> core::Result<void> {
        auto stmt = conn.Prepared(core::sql::Stmt::kRelayMarkPublished, size);
        if (!stmt) return core::Fail(stmt.error());
        std::vector<core::SqlValue> params;
        params.reserve(size * 4 + 1);
        for (size_t k = 0; k < size; ++k) {
          const size_t i = at + std::min(k, count - 1);
          params.emplace_back(ids[i]);
          params.emplace_back(notes[i].WaitedMs());
          params.emplace_back(notes[i].text);
        }
        params.emplace_back(token);
        for (size_t k = 0; k < size; ++k) params.emplace_back(ids[at + std::min(k, count - 1)]);
        if (auto done = (*stmt)->Execute(params); !done) return done;
        total += static_cast<size_t>((*stmt)->AffectedRows());
        return {};
      });
  if (!marked) return core::Fail(marked.error());
  return total;
}

}  // namespace

template <class Body>
auto MariaDbRelayStore::MarkTransaction(core::MariaDbConnection& conn, Body&& body)
    -> decltype(body()) {
  for (int attempt = 1;; ++attempt) {
    auto done = session_.InTransaction(conn, body);
    if (done || !core::IsDeadlock(done.error()) || attempt == kMarkAttempts) return done;
  }
}

core::Result<void> RoomsAfterMark(core::MariaDbConnection& conn,
                                  const std::map<int64_t, RoomNextOfRow>& next_of_row) {
  std::vector<int64_t> ids;
  ids.reserve(next_of_row.size());
  for (const auto& [id, next] : next_of_row) ids.push_back(id);
  auto rooms_of = RoomsOfRows(conn, ids);
  if (!rooms_of) return core::Fail(rooms_of.error());
  std::map<std::string, RoomNext> rooms;
  for (const auto& [id, room] : *rooms_of) {
    const RoomNextOfRow& next = next_of_row.at(id);
    // A room of several rows takes the first one's (a pack's rows share their outcome).
    rooms.try_emplace(room, next.statement, next.delay_ms);
  }
  return WriteRoomsInOrder(conn, rooms);
}

core::Result<size_t> MariaDbRelayStore::MarkPublished(const std::string& token,
                                                      std::span<const int64_t> ids,
                                                      std::span<const AttemptNote> notes) {
  if (ids.empty()) {
    return 0;
  }
  if (!notes.empty() && notes.size() != ids.size()) {
    return core::Fail(ErrorCode::kInvalidArgument,
                      "mark_published: " + std::to_string(notes.size()) + " notes for " +
                          std::to_string(ids.size()) + " rows");
  }
  return session_.WithConnection([&](core::MariaDbConnection& conn) {
    return MarkTransaction(conn, [&]() -> core::Result<size_t> {
      auto marked = notes.empty() ? core::StoreSession::UpdateHeldChunks(
                                        conn, core::sql::Stmt::kMarkPublished, {}, token, ids)
                                  : MarkPublishedNoted(conn, token, ids, notes);
      if (!marked) return marked;
      std::map<int64_t, RoomNextOfRow> next;
      for (int64_t id : ids)
        next[id] = RoomNextOfRow{&core::sql::Stmt::kRoomsProgress, room_gap_ms_};
      if (auto rooms = RoomsAfterMark(conn, next); !rooms) return core::Fail(rooms.error());
      return marked;
    });
  });
}

template <class ParamsOf, class NextOf>
core::Result<size_t> MariaDbRelayStore::UpdateEachAttempt(const core::sql::Statement& id,
                                                          std::span<const FailedAttempt> attempts,
                                                          ParamsOf&& params_of, NextOf&& next_of) {
  if (attempts.empty()) {
    return 0;
  }
  return session_.WithConnection([&](core::MariaDbConnection& conn) {
    return MarkTransaction(conn, [&]() -> core::Result<size_t> {
      auto stmt = conn.Prepared(id);
      if (!stmt) {
        return core::Fail(stmt.error());
      }
      size_t total = 0;
      std::map<int64_t, RoomNextOfRow> next;
      for (const FailedAttempt& attempt : attempts) {
        const auto params = params_of(attempt);
        if (auto done = (*stmt)->Execute(params); !done) {
          return core::Fail(done.error());
        }
        total += static_cast<size_t>((*stmt)->AffectedRows());
        next[attempt.id] = next_of(attempt);
      }
      if (auto rooms = RoomsAfterMark(conn, next); !rooms) return core::Fail(rooms.error());
      return total;
    });
  });
}

// One statement per row, each reading the server's clock: in descending id order, so a later row
// never gets a later due time than an earlier one (relay_store.h). Every row is held by `token`
// and written by primary key, and claims skip locked rows, so the order cannot deadlock. A failed
// head's room is due again at its retry.
core::Result<size_t> MariaDbRelayStore::MarkFailed(const std::string& token,
                                                   std::span<const FailedAttempt> attempts) {
  std::vector<FailedAttempt> latest_first(attempts.begin(), attempts.end());
  std::sort(latest_first.begin(), latest_first.end(),
            [](const FailedAttempt& a, const FailedAttempt& b) { return a.id > b.id; });
  return UpdateEachAttempt(
      core::sql::Stmt::kMarkFailed, latest_first,
      [&](const FailedAttempt& attempt) {
        auto [entries, waited, rest] = EntryParams(attempt.note);
        return std::array<core::SqlValue, 9>{
            core::TruncateUtf8(attempt.error, core::kMaxLastErrorChars),
            attempt.retry_after_ms,
            int64_t{attempt.dropped ? 1 : 0},
            int64_t{attempt.pack_size},
            std::move(entries),
            std::move(waited),
            std::move(rest),
            attempt.id,
            token};
      },
      [](const FailedAttempt& attempt) {
        return RoomNextOfRow{&core::sql::Stmt::kRoomsRetry,
                             std::max<int64_t>(attempt.retry_after_ms, 0)};
      });
}

// One statement per row (primary key, token-checked like mark_failed); a parked row's room goes
// on at once with its later rows.
core::Result<size_t> MariaDbRelayStore::MarkParked(const std::string& token,
                                                   std::span<const FailedAttempt> attempts) {
  return UpdateEachAttempt(
      core::sql::Stmt::kMarkParked, attempts,
      [&](const FailedAttempt& attempt) {
        auto [entries, waited, rest] = EntryParams(attempt.note);
        return std::array<core::SqlValue, 7>{
            int64_t{attempt.attempted ? 1 : 0},
            core::TruncateUtf8(attempt.error, core::kMaxLastErrorChars),
            std::move(entries),
            std::move(waited),
            std::move(rest),
            attempt.id,
            token};
      },
      [](const FailedAttempt&) {
        return RoomNextOfRow{&core::sql::Stmt::kRoomsProgress, 0};
      });
}

}  // namespace room_outbox::relay
