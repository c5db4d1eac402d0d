// BenchDatabase: one fresh schema on the benchmark's private MariaDB (schema/*.sql applied),
// dropped again on destruction, plus fast ways to fill the outbox with rows shaped exactly like
// the hook's (same columns, valid envelope JSON).
//
// Not thread-safe: one admin connection, used from the thread that owns the object.
#pragma once

#include <mysql.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/mysql/mysql_handles.h"
#include "room_outbox/options.h"

namespace room_outbox::bench {

class BenchDatabase {
 public:
  // Creates database `name` (dropping a leftover of the same name) over `socket` as root.
  BenchDatabase(const std::string& socket, std::string name);
  ~BenchDatabase();
  BenchDatabase(const BenchDatabase&) = delete;
  BenchDatabase& operator=(const BenchDatabase&) = delete;

  const std::string& name() const { return name_; }
  // Options reaching this database (root over the unix socket).
  MysqlOptions Options() const;

  using Row = std::vector<std::string>;  // NULL reads as "NULL"
  // Runs SQL text (benchmark-controlled) and returns the rows of its result, if any.
  std::vector<Row> Query(const std::string& sql);
  void Exec(const std::string& sql) { (void)Query(sql); }
  // The first column of the first row as an integer.
  int64_t Scalar(const std::string& sql);
  // `text` as a quoted SQL string literal.
  std::string Quote(const std::string& text);

  int64_t PendingCount() {
    return Scalar("SELECT COUNT(*) FROM room_outbox WHERE status='pending'");
  }

 private:
  std::string socket_;
  std::string name_;
  core::MysqlPtr conn_;
};

// Rows to insert into room_outbox.
struct OutboxFill {
  size_t rows = 0;
  size_t rooms = 1;
  // Each row's room is drawn from a fixed-seed generator, so commit order interleaves rooms as
  // a busy service would, and every run inserts the same sequence.
  uint64_t seed = 1;
  std::string id_prefix = "bench";  // event_id "<prefix>-e<n>", command_id "<prefix>-c<n>"
  int64_t created_at_ms = 0;
  // Every `busy_every`-th row (0: none) goes to one room, "room-busy", instead of a drawn one.
  size_t busy_every = 0;
};

// The room that OutboxFill::busy_every fills.
extern const char kBusyRoomId[];

// Inserts pending, due rows (next_attempt_at_ms 0, no claim token) with multi-row INSERTs of the
// hook's columns; envelopes are encoded with the hook's codec. Returns the seconds it took.
double InsertPendingRows(BenchDatabase& db, const OutboxFill& fill);

// Inserts `rows` rows with status='published' in one INSERT ... SELECT over MariaDB's Sequence
// engine (seq_1_to_N); envelopes are built with JSON_OBJECT and hold every envelope field.
// Returns the seconds it took.
double InsertPublishedRowsFromSequence(BenchDatabase& db, size_t rows, size_t rooms,
                                       int64_t created_at_ms);

// An outage's backlog: `rooms` rooms ("room-<n>") of `events_per_room` pending, due
// RoomGiftSent rows each, written the way events arrive during an outage (every room's first
// event, then every room's second, ...), with envelopes built by JSON_OBJECT in one
// INSERT ... SELECT per event index over MariaDB's Sequence engine. Returns the seconds it took.
double InsertRoomBacklog(BenchDatabase& db, size_t rooms, size_t events_per_room,
                         int64_t created_at_ms);

// The hook's three pushed event types, used for the filled rows and the commit benchmarks.
extern const std::vector<std::string> kBenchEventTypes;

}  // namespace room_outbox::bench
