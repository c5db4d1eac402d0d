// Every SQL text of the outbox stores, in one place, one entry per statement (namespace Stmt at the
// end): one shared text unless a statement set overrides it. A program links the entries it uses
// and no others, so the hook's library carries none of the relay's statements. The MariaDB set
// (MariaDB 10.6+) and the MySQL set (MySQL 8.0.1+; MariaDB accepts it too, which is how CI runs it)
// differ only where they must: MySQL has no INSERT ... RETURNING, so its commit of leased rows
// reads back with one SELECT what MariaDB's inserts return. Both sets avoid what either server
// deprecates where an equivalent exists; LOCK IN SHARE MODE stays (MariaDB 10.11 rejects FOR
// SHARE).
//
// Each statement names the index it relies on (schema/*.sql): idx_pending_due (status,
// next_attempt_at_ms, id), idx_room_status (status, room_id, id since schema 006; room_id, status,
// id before it: every statement reads it with both columns by equality), idx_command_id
// (command_id, id, event_id since schema 008; command_id before it: every statement reads it by
// command_id alone), idx_unlisted (room_listed, status, id; schema 009), idx_claim_token
// (claim_token; schema 010), uk_command_id, uk_event_id, the primary key, and on room_outbox_room
// (schema 009) its primary key (room_id) and idx_room_due (due_at_ms, room_id).
//
// Statements that take a list of ids or rooms end in " IN " and get a placeholder list appended
// (id_lists.h), in a few fixed sizes, so each has a bounded number of prepared shapes;
// statement_text.h composes every shape from the fragments of the table.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

// The server's clock in epoch milliseconds: the one clock of every absolute time the store
// writes or compares (due times, leases, pace slots, ages). The session's time_zone is '+00:00'
// (connection.h), so NOW(3) has no DST gap or repeat for UNIX_TIMESTAMP to resolve.
#define ROOM_OUTBOX_SERVER_NOW_MS "CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED)"

// The due time of an idle room of the schedule (room_outbox_room): one whose pending rows a claim
// found all gone. It is never due; rows that arrive make it due again (the listing), and
// `outbox-relay purge` deletes idle rooms. The year 10000 in epoch milliseconds; the same number as
// sql::kIdleRoomDueMs below (StatementTextTest checks the two agree).
#define ROOM_OUTBOX_IDLE_ROOM_MS "253402300800000"

namespace room_outbox::core::sql {

// ROOM_OUTBOX_IDLE_ROOM_MS as a number: what a claim writes for a room without pending rows.
inline constexpr int64_t kIdleRoomDueMs = 253'402'300'800'000;

// --- session and transaction control (every connection; sent as text, they carry no value) ---

// innodb_lock_wait_timeout of every session, in seconds: a blocked write fails fast (kAborted)
// and is retried instead of stalling the relay.
#define ROOM_OUTBOX_LOCK_WAIT_SECONDS 5
#define ROOM_OUTBOX_STRINGIFY2(x) #x
#define ROOM_OUTBOX_STRINGIFY(x) ROOM_OUTBOX_STRINGIFY2(x)
inline constexpr int kLockWaitTimeoutSeconds = ROOM_OUTBOX_LOCK_WAIT_SECONDS;

// Right after connect (connection.h says why each).
inline constexpr std::string_view kSessionIsolation =
    "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED";
inline constexpr std::string_view kSessionTimeZone = "SET SESSION time_zone = '+00:00'";
// Appended to the server's modes, which stay as configured. Every mode named here exists in
// MariaDB 10.6+ and MySQL 8.
inline constexpr std::string_view kSessionSqlMode =
    "SET SESSION sql_mode = CONCAT_WS(',', NULLIF(@@SESSION.sql_mode, ''), "
    "'STRICT_ALL_TABLES,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,"
    "ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION')";
inline constexpr std::string_view kSessionLockWait =
    "SET SESSION innodb_lock_wait_timeout = " ROOM_OUTBOX_STRINGIFY(ROOM_OUTBOX_LOCK_WAIT_SECONDS);
#undef ROOM_OUTBOX_STRINGIFY
#undef ROOM_OUTBOX_STRINGIFY2
#undef ROOM_OUTBOX_LOCK_WAIT_SECONDS

inline constexpr std::string_view kBegin = "START TRANSACTION";
inline constexpr std::string_view kCommit = "COMMIT";
inline constexpr std::string_view kRollback = "ROLLBACK";

// --- commit (hook) ---
//
// Every absolute time the commit writes is the database server's clock, read in the statement
// itself: a hook host whose wall clock is off cannot make its rows due too early (duplicates) or
// too late (stalls). NOW(3) is the time the statement started, the same for every use in it.
// ROOM_OUTBOX_SERVER_NOW_MS (above) splices the expression into the literals; kServerNowMs is the
// expression for code that builds no literal.
inline constexpr std::string_view kServerNowMs = ROOM_OUTBOX_SERVER_NOW_MS;

// The commit is BEGIN, the command log INSERT, the caller's statements, one or a few multi-row
// outbox INSERTs, COMMIT: with RETURNING (the MariaDB set) the statements it needs anyway, nothing
// read separately. The MySQL set adds one SELECT before COMMIT (kCommitReadBack) when the rows
// are leased to a sync publish, which needs their ids; rows written for the relay alone need
// nothing read back, so that commit is the same four statements in both sets.

// uk_command_id: a repeated command_id fails with a duplicate-key error and nothing is written.
// The MariaDB set's RETURNING hands back the server's clock (created_at_ms,
// CommitWrite::server_now_ms). Placeholders: command_id, room_id, command_type, request_id,
// room_seq, payload.
#define ROOM_OUTBOX_INSERT_COMMAND_LOG                                                      \
  "INSERT INTO room_command_log (command_id, room_id, command_type, request_id, room_seq, " \
  "payload, created_at_ms) VALUES (?, ?, ?, ?, ?, ?, " ROOM_OUTBOX_SERVER_NOW_MS ")"
inline constexpr std::string_view kInsertCommandLog =
    ROOM_OUTBOX_INSERT_COMMAND_LOG " RETURNING created_at_ms";
inline constexpr std::string_view kInsertCommandLogPlain = ROOM_OUTBOX_INSERT_COMMAND_LOG;
#undef ROOM_OUTBOX_INSERT_COMMAND_LOG

// MariaDB set: the same insert with the per-room order check in its RETURNING: whether the room
// already has a pending outbox row (idx_room_status: one dive). INSERT ... SELECT rather than
// VALUES: under READ COMMITTED InnoDB reads the subquery as a consistent, non-locking read only
// for INSERT ... SELECT (with VALUES it takes shared locks and waits for a claim that holds the
// room's rows). One row, so innodb_autoinc_lock_mode 1 holds the table's AUTO-INC lock for this
// short statement only. Placeholders: command_id, room_id, command_type, request_id, room_seq,
// payload, room_id.
inline constexpr std::string_view kInsertCommandLogChecked =
    "INSERT INTO room_command_log (command_id, room_id, command_type, request_id, room_seq, "
    "payload, created_at_ms) SELECT ?, ?, ?, ?, ?, ?, " ROOM_OUTBOX_SERVER_NOW_MS
    " RETURNING created_at_ms, EXISTS (SELECT 1 FROM room_outbox FORCE INDEX (idx_room_status) "
    "WHERE room_id = ? AND status = 'pending' LIMIT 1)";

// uk_event_id. The command's outbox rows: kInsertOutboxHead, then kInsertOutboxRow once per row
// (comma-separated), then, in the MariaDB set, kInsertOutboxReturning, which hands back each
// row's id with its event_id in insert order (so no reliance on consecutive AUTO_INCREMENT ids).
// A pending row is leased to the sync publish until the server's now + lease_ms (0 and a NULL
// token: due at once); a row of a type never sent (skip_event_types) is written 'published' with
// published_at_ms, lease_ms 0 and a NULL token, so it is never claimed.
// Placeholders per row: event_id, event_type, room_id, command_id, request_id, envelope,
// status ('pending' | 'published'), lease_ms, claim_token, published (0 | 1).
inline constexpr std::string_view kInsertOutboxHead =
    "INSERT INTO room_outbox (event_id, event_type, room_id, command_id, request_id, envelope, "
    "status, retry_count, next_attempt_at_ms, claim_token, created_at_ms, updated_at_ms, "
    "published_at_ms) VALUES ";
inline constexpr std::string_view kInsertOutboxRow =
    "(?, ?, ?, ?, ?, ?, ?, 0, " ROOM_OUTBOX_SERVER_NOW_MS " + ?, ?, " ROOM_OUTBOX_SERVER_NOW_MS
    ", " ROOM_OUTBOX_SERVER_NOW_MS ", IF(?, " ROOM_OUTBOX_SERVER_NOW_MS ", NULL))";
inline constexpr std::string_view kInsertOutboxReturning = " RETURNING id, event_id";
// The most rows one outbox INSERT takes (the hook's chunk size, outbox_insert.h).
inline constexpr size_t kMaxRowsPerOutboxInsert = 16;

// MySQL set, leased rows: what MariaDB's RETURNING hands back, read in one plain SELECT after the
// outbox INSERTs, before COMMIT. A plain SELECT under READ COMMITTED is a consistent, non-locking
// read: it sees this transaction's own rows and never waits for a claim's locks. Columns: the
// command log row's created_at_ms (the server's clock, taken by its INSERT before the outbox rows
// were written), the per-room check, then each new row's id and event_id (one row of NULLs for a
// command without events). The ids are read by command_id and matched by event_id, never computed
// from LAST_INSERT_ID(): with innodb_autoinc_lock_mode 2, or a cluster's auto-increment step, a
// multi-row INSERT's ids need not be consecutive. idx_command_id (command_id, id, event_id;
// schema 008) holds both columns, so the rows come from the index alone ("Using index"); on an
// older schema the same statement reads each row's event_id by primary key. No ORDER BY: the
// rows come in the index's order (id order), and matching by event_id reads any order right,
// while sorting the rows of a join would cost a temporary table. uk_command_id for the log row.
// Placeholder: command_id.
#define ROOM_OUTBOX_READ_BACK(check)            \
  "SELECT l.created_at_ms, " check              \
  ", o.id, o.event_id FROM room_command_log l " \
  "LEFT JOIN room_outbox o ON o.command_id = l.command_id WHERE l.command_id = ?"
inline constexpr std::string_view kCommitReadBack = ROOM_OUTBOX_READ_BACK("0");
// The same with the per-room order check: whether the room has a pending row before this
// command's first (a lower id: one the relay sends first), as the MariaDB set's check finds the
// room's pending rows before its insert. From the indexes alone: this command's first id is one
// dive of idx_command_id, the earlier row one of idx_room_status (status, room_id, id), where the
// range stops at the first entry. Placeholders: room_id, command_id, command_id.
inline constexpr std::string_view kCommitReadBackChecked = ROOM_OUTBOX_READ_BACK(
    "EXISTS (SELECT 1 FROM room_outbox e FORCE INDEX (idx_room_status) WHERE e.status = 'pending' "
    "AND e.room_id = ? AND e.id < (SELECT MIN(f.id) FROM room_outbox f WHERE f.command_id = ?) "
    "LIMIT 1)");
#undef ROOM_OUTBOX_READ_BACK

// uk_command_id, a locking read: when the command's transaction is still open on the server
// (its COMMIT in flight), this waits for its end instead of reading the old state.
// Placeholder: command_id.
inline constexpr std::string_view kFindCommand =
    "SELECT id FROM room_command_log WHERE command_id = ? LOCK IN SHARE MODE";

// Whether the server is read-only (read_only; MySQL's super_read_only sets it too): after a lost
// COMMIT answer, a command missing from such a server's log may still be on its way there (a
// replica the failover reached), so its absence proves no rollback. No placeholder.
inline constexpr std::string_view kServerReadOnly = "SELECT @@global.read_only";

// idx_command_id (from the index alone): the command's outbox rows in commit order. Placeholder:
// command_id.
inline constexpr std::string_view kCommandRows =
    "SELECT id FROM room_outbox WHERE command_id = ? ORDER BY id";

// The hook's hand-back of a pack (2+ rows) whose send failed without IM definitely dropping it:
// how many events the message carried (schema 007), on the pack's first row while the command's
// claim token still holds it, before the rows are released (kRelease), so the next send of that
// row is the same pack again. Primary key. Placeholders: pack_size, id, token.
inline constexpr std::string_view kRecordPackSize =
    "UPDATE room_outbox SET pack_size = ? WHERE id = ? AND claim_token = ? AND status = 'pending'";

// --- claim (relay) ---
//
// A claim is one short transaction (claim_plan.h). With per-room order it works from the room
// schedule (schema 009, room_outbox_room): the listing of rows that arrived (kListArrivals locks
// them, kListRooms puts their rooms on the schedule, kListMark marks them listed);
// kServerNowRooms; kDueRooms (locks the rooms due, oldest due first, at most the batch);
// kRoomPrefix (reads); kLockRows (locks); maybe kRoomAfter + kLockRows again; then kLease and
// kSchedule, which write only rows the claim locked, by primary key, in ascending id order, and
// kRoomsDue, which writes only rooms the claim locked. So its cost follows the rows
// that arrived and the rooms it serves, never the rooms backlogged. Without per-room order:
// kServerNow, kClaimWindow (locks), kLease. No read of a claim waits for a lock (SKIP LOCKED); the
// one write that may wait, kListRooms, takes room locks in room_id order, as the marks do after
// their row writes, so claims and marks cannot deadlock each other.

// Without per-room order: the server's clock, read once per claim, and the time of the earliest
// pending row not yet due (NULL when none): a lease the hook's sync publish holds, a retry. The
// relay starts its next round when that row comes due if that is sooner than its poll.
// idx_pending_due (status, next_attempt_at_ms, id): the MIN is the first entry of the range.
inline constexpr std::string_view kServerNow =
    "SELECT " ROOM_OUTBOX_SERVER_NOW_MS
    ", (SELECT MIN(next_attempt_at_ms) FROM room_outbox "
    "WHERE status = 'pending' AND next_attempt_at_ms > " ROOM_OUTBOX_SERVER_NOW_MS ")";

// With per-room order: the server's clock and the time the earliest room not yet due comes due
// (NULL when none): a lease, a retry, an interval slot, a head another claim or the hook holds. A
// lease nobody gives back (a relay or a hook that died) is claimed when it runs out.
// idx_room_due (due_at_ms, room_id): the MIN is the first entry of the range.
inline constexpr std::string_view kServerNowRooms =
    "SELECT " ROOM_OUTBOX_SERVER_NOW_MS
    ", (SELECT MIN(due_at_ms) FROM room_outbox_room WHERE due_at_ms > " ROOM_OUTBOX_SERVER_NOW_MS
    " AND due_at_ms < " ROOM_OUTBOX_IDLE_ROOM_MS ")";

// The columns of a claimed row, in the order claim_reads.cc reads them.
// parked_at_ms IS NOT NULL: the row was parked and requeued since (the expiry rule, ExpiryPolicy).
// pack_size (schema 007): the events of the failed pack this row headed, 0 when none.
#define ROOM_OUTBOX_CLAIM_COLUMNS                                             \
  "id, event_id, event_type, room_id, envelope, retry_count, created_at_ms, " \
  "next_attempt_at_ms, claim_token IS NOT NULL, drop_count, parked_at_ms IS NOT NULL, pack_size "

// Without per-room order: idx_pending_due (status, next_attempt_at_ms, id) walks the due rows in
// order, no filesort, and stops at the limit; rows another claim holds are skipped, never waited
// for. For a table of a few rows the optimizer may read them all and sort instead.
// Placeholders: now_ms, limit.
inline constexpr std::string_view kClaimWindow =
    "SELECT " ROOM_OUTBOX_CLAIM_COLUMNS
    "FROM room_outbox WHERE status = 'pending' AND next_attempt_at_ms <= ? "
    "ORDER BY next_attempt_at_ms, id LIMIT ? FOR UPDATE SKIP LOCKED";

// The listing, first in every claim with per-room order: pending rows no relay has put on the
// room schedule yet (room_listed = 0: rows written since, or given back by a relay or requeued),
// oldest first, at most limit, locked (rows another transaction holds are skipped: the next claim
// lists them). idx_unlisted (room_listed, status, id): the range holds only such rows, never the
// backlog or the published history. Columns: id, room_id, in flight (1 | 0: a claim token and a
// lease not over on the server's clock: the hook's sync publish, or a dead hook's lease). The
// claim lists before it reads its now, so the rooms listed here count in its next due time.
// Placeholder: limit.
inline constexpr std::string_view kListArrivals =
    "SELECT id, room_id, claim_token IS NOT NULL AND next_attempt_at_ms "
    "> " ROOM_OUTBOX_SERVER_NOW_MS
    " FROM room_outbox FORCE INDEX (idx_unlisted) WHERE room_listed = 0 AND status = 'pending' "
    "ORDER BY id LIMIT ? FOR UPDATE SKIP LOCKED";

// The listed rows' rooms on the schedule, each due when its earliest listed row is (a row written
// due at once: its commit time, so rooms come due oldest first; a row in flight: its lease's end,
// so a lease nobody gives back is claimed when it runs out), or earlier when it already was. The
// rows are the ones kListArrivals locked, read by primary key; rooms are inserted in room_id order,
// so two listings lock rooms in the same order. Placeholders: ids...
inline constexpr std::string_view kListRoomsPrefix =
    "INSERT INTO room_outbox_room (room_id, due_at_ms, updated_at_ms) SELECT x.room_id, "
    "x.due_at_ms, " ROOM_OUTBOX_SERVER_NOW_MS
    " FROM (SELECT room_id, MIN(next_attempt_at_ms) AS due_at_ms FROM room_outbox WHERE id IN ";
inline constexpr std::string_view kListRoomsSuffix =
    " GROUP BY room_id) AS x ORDER BY x.room_id ON DUPLICATE KEY UPDATE "
    "due_at_ms = LEAST(room_outbox_room.due_at_ms, x.due_at_ms), "
    "updated_at_ms = " ROOM_OUTBOX_SERVER_NOW_MS;

// Primary key; rows kListArrivals locked that are not in flight (a row in flight stays unlisted:
// when its holder gives it back, the next listing makes its room due at once). Placeholders: ids...
inline constexpr std::string_view kListMarkPrefix =
    "UPDATE room_outbox SET room_listed = 1 WHERE id IN ";

// The rooms due (due_at_ms <= the server's now, read in the statement: later than the listing's,
// so the rooms it just put on the schedule are due), oldest due first, at most limit, locked: a
// room another claim (or a listing, or a mark) holds is skipped, so concurrent claims serve
// different rooms. idx_room_due walks the due range in order and stops at the limit; reading
// updated_at_ms (outside the index) reads each room's row, so FOR UPDATE locks the row itself, as
// a mark's room write does first (an index entry locked alone would let a claim and a mark each
// hold what the other waits for). Placeholder: limit.
inline constexpr std::string_view kDueRooms =
    "SELECT room_id, updated_at_ms FROM room_outbox_room FORCE INDEX (idx_room_due) "
    "WHERE due_at_ms <= " ROOM_OUTBOX_SERVER_NOW_MS
    " ORDER BY due_at_ms, room_id LIMIT ? FOR UPDATE SKIP LOCKED";

// idx_pending_due (without per-room order) or the room schedule and idx_unlisted (with it):
// whether something is due now on the server's clock (1) or not (0). The relay asks it before
// claiming in a round a wake-up started: a datagram that brings no row then costs this one read
// instead of a claim's transaction. Each EXISTS stops at its first entry. No placeholder.
inline constexpr std::string_view kAnyDue =
    "SELECT EXISTS (SELECT 1 FROM room_outbox WHERE status = 'pending' "
    "AND next_attempt_at_ms <= " ROOM_OUTBOX_SERVER_NOW_MS ")";
inline constexpr std::string_view kAnyDueRooms =
    "SELECT EXISTS (SELECT 1 FROM room_outbox_room WHERE due_at_ms <= " ROOM_OUTBOX_SERVER_NOW_MS
    ") OR EXISTS (SELECT 1 FROM room_outbox FORCE INDEX (idx_unlisted) WHERE room_listed = 0 "
    "AND status = 'pending' AND next_attempt_at_ms <= " ROOM_OUTBOX_SERVER_NOW_MS ")";

// idx_room_status (room_id and status by equality): one range per room from its head, LIMIT rows
// each (the room's part of the batch plus one), not the room's whole backlog. A part is
// "(kRoomPrefixPart) UNION ALL (...)"; unused parts of a fixed-size list get LIMIT 0. The claim
// token (NULL when none) says whose lease holds a row in flight; pack_size on the head is the
// pack it recorded (schema 007), so the claim reads the room's part with that pack whole.
// Placeholders per part: room_id, limit.
#define ROOM_OUTBOX_ROOM_ROWS                                                                  \
  "SELECT room_id, id, event_type, next_attempt_at_ms, claim_token IS NOT NULL, claim_token, " \
  "pack_size FROM room_outbox FORCE INDEX (idx_room_status) WHERE room_id = ? AND status = "   \
  "'pending'"
inline constexpr std::string_view kRoomPrefixPart = ROOM_OUTBOX_ROOM_ROWS " ORDER BY id LIMIT ?";

// idx_room_status: the same range, after the last row of the room's run. Placeholders per part:
// room_id, after_id, limit.
inline constexpr std::string_view kRoomAfterPart =
    ROOM_OUTBOX_ROOM_ROWS " AND id > ? ORDER BY id LIMIT ?";
#undef ROOM_OUTBOX_ROOM_ROWS

// Primary key: locks the due rows the claim read (a room's first rows from its head, or after its
// run; a lease that ran out is due), skipping any another transaction holds. Placeholders: now_ms,
// ids...
inline constexpr std::string_view kLockRowsPrefix =
    "SELECT " ROOM_OUTBOX_CLAIM_COLUMNS
    "FROM room_outbox WHERE status = 'pending' AND next_attempt_at_ms <= ? AND id IN ";
inline constexpr std::string_view kLockRowsSuffix = " ORDER BY id FOR UPDATE SKIP LOCKED";

// Primary key; rows locked by this claim. A leased row's room is on the schedule (the claim writes
// its due time), so the row counts as listed. Placeholders: token, lease_until_ms, now_ms, ids...
inline constexpr std::string_view kLeasePrefix =
    "UPDATE room_outbox SET claim_token = ?, next_attempt_at_ms = ?, updated_at_ms = ?, "
    "room_listed = 1 WHERE status = 'pending' AND id IN ";

// Primary key; rows locked by this claim (pace slots, rows pushed behind their room's head), listed
// as leased rows are. The SET is "CASE id WHEN ? THEN ? ... END" with one pair per row (a short
// list repeats its last pair). Placeholders: pairs..., now_ms, ids...
inline constexpr std::string_view kScheduleHead =
    "UPDATE room_outbox SET next_attempt_at_ms = CASE id";
inline constexpr std::string_view kScheduleWhen = " WHEN ? THEN ?";
inline constexpr std::string_view kScheduleTail =
    " END, updated_at_ms = ?, room_listed = 1 WHERE status = 'pending' AND id IN ";

// Primary key of room_outbox_room; rooms locked by this claim: when each next needs a claim
// ("CASE room_id WHEN ? THEN ? ... END", a short list repeating its last pair), kIdleRoomDueMs for
// a room without pending rows left (a row committed or given back since is unlisted, so the
// listing makes the room due again). An UPDATE, never a DELETE: under READ COMMITTED an UPDATE
// that reads a row another transaction holds and does not match it passes it without waiting.
// Placeholders: pairs..., room_ids...
inline constexpr std::string_view kRoomsDueHead =
    "UPDATE room_outbox_room SET due_at_ms = CASE room_id";
inline constexpr std::string_view kRoomsDueTail =
    " END, updated_at_ms = " ROOM_OUTBOX_SERVER_NOW_MS " WHERE room_id IN ";

// The rooms of rows a relay marked, read by primary key in the marks' transaction (before the
// rooms are written, in room_id order). Columns: id, room_id. Placeholders: ids...
inline constexpr std::string_view kRowRoomsPrefix =
    "SELECT id, room_id FROM room_outbox WHERE id IN ";
inline constexpr std::string_view kRowRoomsSuffix = "";

// The rooms of rows a relay marked published or parked: due after the room's gap (the server's
// now + the placeholder, ms: room_min_interval after a message, so the next message of the room
// keeps it whichever relay sends it; 0 after a park), unless due earlier already. Written after the
// rows, in the marks' transaction, by primary key in room_id order (the order the listing locks
// rooms in, so the two cannot deadlock): a claim that read the room's head in flight before the
// mark committed set the room's due time to that lease's end, and this (which waits for that
// claim's lock on the room) brings it back. A room with no pending row left (one dive of
// idx_room_status, which sees the rows this transaction marked) goes idle instead: after a drain
// of many rooms, none is left due with nothing to send, in the way of the rooms that have rows
// (a row committed since is unlisted, and the listing makes its room due again).
// Placeholders: gap_ms, room_ids...
inline constexpr std::string_view kRoomsProgressPrefix =
    "UPDATE room_outbox_room SET due_at_ms = IF(EXISTS (SELECT 1 FROM room_outbox FORCE INDEX "
    "(idx_room_status) WHERE room_outbox.room_id = room_outbox_room.room_id AND "
    "room_outbox.status = 'pending'), LEAST(due_at_ms, " ROOM_OUTBOX_SERVER_NOW_MS
    " + GREATEST(?, 0)), " ROOM_OUTBOX_IDLE_ROOM_MS "), updated_at_ms = " ROOM_OUTBOX_SERVER_NOW_MS
    " WHERE room_id IN ";
// The rooms of rows a relay marked failed: due at the failed head's retry, the server's now + the
// placeholder (ms): nothing of the room goes before it. As kRoomsProgress otherwise.
// Placeholders: retry_after_ms, room_ids...
inline constexpr std::string_view kRoomsRetryPrefix =
    "UPDATE room_outbox_room SET due_at_ms = " ROOM_OUTBOX_SERVER_NOW_MS
    " + GREATEST(?, 0), updated_at_ms = " ROOM_OUTBOX_SERVER_NOW_MS " WHERE room_id IN ";

// --- marks (relay and hook) ---
//
// Primary key; only rows still held by the claim token. Times are the server's, taken in the
// statement. Placeholders: token, ids...
inline constexpr std::string_view kMarkPublishedPrefix =
    "UPDATE room_outbox SET status = 'published', last_error = NULL, "
    "published_at_ms = " ROOM_OUTBOX_SERVER_NOW_MS ", updated_at_ms = " ROOM_OUTBOX_SERVER_NOW_MS
    ", claim_token = NULL WHERE claim_token = ? AND status = 'pending' AND id IN ";

// A row's attempt history (schema 011): an entry is the server's now minus the first placeholder
// (how long the result waited to be written, ms), a tab and the second placeholder (the rest of
// the entry, relay/src/store/attempt_history.h), ended by a newline; `attempts` keeps the last 16
// entries (SUBSTRING_INDEX of the 17th newline from the end). A NULL rest appends nothing.
#define ROOM_OUTBOX_ATTEMPT_ENTRY "CONCAT(" ROOM_OUTBOX_SERVER_NOW_MS " - ?, '\t', ?, '\n')"
#define ROOM_OUTBOX_ATTEMPTS_KEEP_OPEN "SUBSTRING_INDEX(CONCAT(COALESCE(attempts, ''), "
#define ROOM_OUTBOX_ATTEMPTS_KEEP_CLOSE "), '\n', -17)"
// The failure marks' append: one entry, or none for a NULL rest (CONCAT is then NULL).
#define ROOM_OUTBOX_ATTEMPTS_APPEND                                               \
  "attempts = COALESCE(" ROOM_OUTBOX_ATTEMPTS_KEEP_OPEN ROOM_OUTBOX_ATTEMPT_ENTRY \
      ROOM_OUTBOX_ATTEMPTS_KEEP_CLOSE ", attempts)"

// The relay's kMarkPublished with each row's history entry: "CASE id WHEN ? THEN <entry> ... END"
// (a short list repeats its last triple). Placeholders: (id, waited_ms, entry rest)..., token,
// ids...
inline constexpr std::string_view kRelayMarkPublishedHead =
    "UPDATE room_outbox SET status = 'published', last_error = NULL, "
    "published_at_ms = " ROOM_OUTBOX_SERVER_NOW_MS ", updated_at_ms = " ROOM_OUTBOX_SERVER_NOW_MS
    ", claim_token = NULL, attempt_count = attempt_count + 1, "
    "attempts = " ROOM_OUTBOX_ATTEMPTS_KEEP_OPEN "CASE id";
inline constexpr std::string_view kRelayMarkPublishedWhen =
    " WHEN ? THEN " ROOM_OUTBOX_ATTEMPT_ENTRY;
inline constexpr std::string_view kRelayMarkPublishedTail =
    " END" ROOM_OUTBOX_ATTEMPTS_KEEP_CLOSE
    " WHERE claim_token = ? AND status = 'pending' AND id IN ";

// Primary key. Placeholders: token, ids...
#define ROOM_OUTBOX_RELEASE_SET                                            \
  "UPDATE room_outbox SET next_attempt_at_ms = " ROOM_OUTBOX_SERVER_NOW_MS \
  ", claim_token = NULL, updated_at_ms = " ROOM_OUTBOX_SERVER_NOW_MS
#define ROOM_OUTBOX_RELEASE_WHERE " WHERE claim_token = ? AND status = 'pending' AND id IN "
// The hook's: it never reads room_listed (schema 009), so it runs on any schema the hook accepts.
// A row the hook leased is not listed while its lease lasts (kListArrivals), so the listing puts
// it on the schedule once it comes back.
inline constexpr std::string_view kReleasePrefix =
    ROOM_OUTBOX_RELEASE_SET ROOM_OUTBOX_RELEASE_WHERE;
// The relay's: the rows are listed again, so the next claim's listing makes their rooms due now
// (a claim made them due at its lease's end).
inline constexpr std::string_view kRelayReleasePrefix =
    ROOM_OUTBOX_RELEASE_SET ", room_listed = 0" ROOM_OUTBOX_RELEASE_WHERE;
#undef ROOM_OUTBOX_RELEASE_WHERE
#undef ROOM_OUTBOX_RELEASE_SET

// Primary key. drop_count (schema 004) grows by the third placeholder, 1 for a definite drop;
// pack_size (schema 007) is the fourth: the events of the pack the row headed when IM did not
// definitely drop it, else 0; the history (schema 011) by the fifth (1, or 0 without an entry)
// and the entry of the sixth and seventh. Placeholders: last_error, retry_after_ms, dropped
// (0 | 1), pack_size, entries (0 | 1), waited_ms, entry rest (NULL: none), id, token.
inline constexpr std::string_view kMarkFailed =
    "UPDATE room_outbox SET retry_count = retry_count + 1, last_error = ?, "
    "next_attempt_at_ms = " ROOM_OUTBOX_SERVER_NOW_MS
    " + GREATEST(?, 0), "
    "drop_count = drop_count + ?, pack_size = ?, "
    "attempt_count = attempt_count + ?, " ROOM_OUTBOX_ATTEMPTS_APPEND
    ", updated_at_ms = " ROOM_OUTBOX_SERVER_NOW_MS
    ", claim_token = NULL "
    "WHERE id = ? AND claim_token = ? AND status = 'pending'";

// --- node lock (relay daemon; relay/src/store/node_lock.h) ---
//
// A relay daemon holds the named lock of its node_id on a connection it keeps for its life; the
// server releases it when that connection ends (the process died, or the server restarted). Its
// claim tokens start with its node's prefix and its run's tag (core/claim_token.h).

// Takes the lock, waiting at most the given seconds, and names the connection that holds it now
// (this one when taken). GET_LOCK answers 1 (taken), 0 (another connection held it for the whole
// wait) or NULL (an error). Both servers have GET_LOCK and IS_USED_LOCK; MySQL limits the name to
// 64 characters (NodeLockName's are 34). No table. Placeholders: name, wait seconds, name.
inline constexpr std::string_view kNodeLockTake = "SELECT GET_LOCK(?, ?), IS_USED_LOCK(?)";

// Right after the lock is taken: the rows an earlier run of this node_id still holds are given
// back, due at once (server now) and unlisted (the listing makes their rooms due), retry_count,
// drop_count and last_error kept: the lock says that
// run's connection is gone, so its leases hold nothing. Rows it had sent and not yet marked go out
// again (the at-least-once that a kill allows). idx_claim_token (schema 010): the range of the
// node's prefix, so the cost is bounded by the node's leased rows, never by the due backlog or the
// published history; the run pattern is checked on each row of that range. Placeholders: the
// node's pattern ('relay-<node>-%'), this run's pattern ('relay-<node>-<run>-%').
inline constexpr std::string_view kReleaseNodeLeases =
    "UPDATE room_outbox SET next_attempt_at_ms = " ROOM_OUTBOX_SERVER_NOW_MS
    ", claim_token = NULL, updated_at_ms = " ROOM_OUTBOX_SERVER_NOW_MS
    ", room_listed = 0 WHERE status = 'pending' AND next_attempt_at_ms > " ROOM_OUTBOX_SERVER_NOW_MS
    " AND claim_token LIKE ? AND claim_token NOT LIKE ?";

// --- relay runs (relay daemons; schema 010, relay/src/store/relay_runs.h) ---
//
// Every relay daemon run has a row in room_outbox_relay_run from the moment it takes its node
// lock: its token prefix ("relay-<node>-<run>-"), its node's lock name and node_id, and a beat on
// the server's clock. A relay finds the runs whose node lock is free and whose beat is old: those
// relays are gone (no live relay runs under their node_id), and it gives their leases back. The
// table holds one row per running relay (and briefly one per relay gone): every statement on it
// costs what it holds.

// A run writes its row when it takes its node lock, and beats it: the same statement (a row that
// a relay giving back leases deleted is written again). Primary key. Placeholders: token_prefix,
// lock_name, node_id.
inline constexpr std::string_view kRelayRunBeat =
    "INSERT INTO room_outbox_relay_run (token_prefix, lock_name, node_id, started_at_ms, beat_ms) "
    "VALUES (?, ?, ?, " ROOM_OUTBOX_SERVER_NOW_MS ", " ROOM_OUTBOX_SERVER_NOW_MS
    ") ON DUPLICATE KEY UPDATE beat_ms = " ROOM_OUTBOX_SERVER_NOW_MS;

// Right after a run took its node lock and gave back the leases of the earlier runs of its
// node_id (kReleaseNodeLeases): their rows go. idx_lock_name. Placeholders: lock_name, this run's
// token_prefix.
inline constexpr std::string_view kRelayRunsForgetNode =
    "DELETE FROM room_outbox_relay_run WHERE lock_name = ? AND token_prefix <> ?";

// The runs proven gone: their node lock is free (IS_FREE_LOCK: no connection holds it, so no
// live relay runs under that node_id) and their beat is older than the placeholder (ms), on the
// server's clock. Reads the whole table (one row per relay). Columns: token_prefix, node_id, the
// beat's age in ms. Placeholders: age in ms, limit.
inline constexpr std::string_view kRelayRunsGone =
    "SELECT token_prefix, node_id, " ROOM_OUTBOX_SERVER_NOW_MS
    " - beat_ms FROM room_outbox_relay_run WHERE beat_ms < " ROOM_OUTBOX_SERVER_NOW_MS
    " - ? AND IS_FREE_LOCK(lock_name) = 1 ORDER BY beat_ms LIMIT ?";

// The leases a gone run still holds are given back, due at once (server now) and unlisted (the
// listing makes their rooms due), retry_count,
// drop_count, pack_size and last_error kept; rows it had sent and not yet marked go out again (the
// at-least-once a kill allows). idx_claim_token (schema 010): a range over the run's token prefix,
// so the cost is the rows given back. Placeholder: the run's pattern ('relay-<node>-<run>-%').
inline constexpr std::string_view kReleaseRunLeases =
    "UPDATE room_outbox SET next_attempt_at_ms = " ROOM_OUTBOX_SERVER_NOW_MS
    ", claim_token = NULL, updated_at_ms = " ROOM_OUTBOX_SERVER_NOW_MS
    ", room_listed = 0 WHERE claim_token LIKE ? AND status = 'pending'";

// A run's row goes: a gone run's after its leases were given back, a run's own when it stops.
// Primary key. Placeholder: token_prefix.
inline constexpr std::string_view kRelayRunForget =
    "DELETE FROM room_outbox_relay_run WHERE token_prefix = ?";

// --- stats ---

// idx_pending_due (status prefix): one pass over the pending rows, not the table; for each
// pending row that has failed, idx_room_status dives to see whether it is its room's head and
// whether a later pending row waits behind it. Columns: pending, oldest pending age (server now -
// MIN(created_at_ms), 0 when none, never negative), rooms held back. A room is held back when
// its head pending row (lowest id) has failed at least once and a later pending row of the room
// waits behind it; this is the one definition of rooms_held_back (the gauge and `stats`).
inline constexpr std::string_view kStats =
    "SELECT COUNT(*), "
    "CASE WHEN COUNT(*) = 0 THEN 0 ELSE GREATEST(0, " ROOM_OUTBOX_SERVER_NOW_MS
    " - MIN(o.created_at_ms)) END, "
    "COALESCE(SUM(o.retry_count > 0 AND NOT EXISTS (SELECT 1 FROM room_outbox e "
    "FORCE INDEX (idx_room_status) WHERE e.room_id = o.room_id AND e.status = 'pending' "
    "AND e.id < o.id) AND EXISTS (SELECT 1 FROM room_outbox l FORCE INDEX (idx_room_status) "
    "WHERE l.room_id = o.room_id AND l.status = 'pending' AND l.id > o.id)), 0) "
    "FROM room_outbox o WHERE o.status = 'pending'";

// The room schedule's rooms that have pending rows (idle rooms are not read), and of them those
// whose head has waited
// longer than the placeholder (ms) since it was committed, on the server's clock (the
// room_outbox_rooms_backlogged and room_outbox_rooms_waiting gauges). One dive of idx_room_status
// per room on the schedule for its head, then the head by primary key: the cost follows the rooms
// backlogged; the relay reads it once per stats interval, never in a claim. A room whose rows
// are not listed yet is not counted until a claim lists them. Placeholder: wait_ms.
inline constexpr std::string_view kRoomsBacklog =
    "WITH h AS (SELECT (SELECT MIN(e.id) FROM room_outbox e FORCE INDEX (idx_room_status) "
    "WHERE e.status = 'pending' AND e.room_id = r.room_id) AS head_id FROM room_outbox_room r "
    "WHERE r.due_at_ms < " ROOM_OUTBOX_IDLE_ROOM_MS
    ") "
    "SELECT COUNT(*), COALESCE(SUM(o.created_at_ms < " ROOM_OUTBOX_SERVER_NOW_MS
    " - ?), 0) FROM h STRAIGHT_JOIN room_outbox o ON o.id = h.head_id";

// --- operator commands ---
// Used by relay/src/ops (outbox-relay stats|show|park|requeue|purge). Every absolute time is the
// database server's clock, read inside the statement (kServerNowMs), never the host's. Each
// statement is one short autocommit transaction: no operator command holds locks across calls.
// Schema 003 adds status 'parked', parked_at_ms and idx_status_published (status,
// published_at_ms, id); idx_created_at (created_at_ms, id) on room_command_log.

// The server's clock in epoch milliseconds, minus a duration (ms): the purge's cut-off, read once
// per run so every batch and the dry run use the same one.
inline constexpr std::string_view kOpsServerNowMinus =
    "SELECT " ROOM_OUTBOX_SERVER_NOW_MS ", " ROOM_OUTBOX_SERVER_NOW_MS " - ?";

// One sample of what outbox-relay stats measures its rates by (two of these some seconds apart):
// the server's clock, the table's highest id (the primary key's last entry: every insert takes a
// new one) and the pending rows (idx_pending_due). Reads no published row.
inline constexpr std::string_view kOpsSample =
    "SELECT " ROOM_OUTBOX_SERVER_NOW_MS
    ", COALESCE((SELECT MAX(id) FROM room_outbox), 0), "
    "(SELECT COUNT(*) FROM room_outbox WHERE status = 'pending')";

// idx_status_published (status first): the parked rows, for room_outbox_parked_rows.
inline constexpr std::string_view kOpsCountParked =
    "SELECT COUNT(*) FROM room_outbox WHERE status = 'parked'";

// Rooms with pending rows: each room's pending count, its head row (lowest pending id) and how
// many rooms have pending rows (the last column, the same on every row). kOpsTopRooms: the rooms
// with the oldest heads first; kOpsTopRoomsByBacklog: the most pending rows first (then the
// oldest head). Reads the pending rows and each head. Placeholder: limit.
#define ROOM_OUTBOX_TOP_ROOMS                                                            \
  "SELECT h.room_id, h.pending, o.event_id, o.retry_count, o.last_error, h.rooms FROM "  \
  "(SELECT room_id, COUNT(*) AS pending, MIN(id) AS head_id, COUNT(*) OVER () AS rooms " \
  "FROM room_outbox WHERE status = 'pending' GROUP BY room_id) h "                       \
  "JOIN room_outbox o ON o.id = h.head_id "
inline constexpr std::string_view kOpsTopRooms = ROOM_OUTBOX_TOP_ROOMS "ORDER BY o.id LIMIT ?";
inline constexpr std::string_view kOpsTopRoomsByBacklog =
    ROOM_OUTBOX_TOP_ROOMS "ORDER BY h.pending DESC, o.id LIMIT ?";
#undef ROOM_OUTBOX_TOP_ROOMS

// uk_event_id. The 15th column says whether a claim holds the row right now (a token and a lease
// not yet over on the server's clock); the last two are the attempt history (schema 011).
inline constexpr std::string_view kOpsShow =
    "SELECT event_id, event_type, room_id, status, retry_count, last_error, created_at_ms, "
    "updated_at_ms, published_at_ms, next_attempt_at_ms, parked_at_ms, envelope, command_id, "
    "request_id, "
    "(claim_token IS NOT NULL AND next_attempt_at_ms > " ROOM_OUTBOX_SERVER_NOW_MS
    "), attempt_count, attempts "
    "FROM room_outbox WHERE event_id = ?";

// uk_event_id. A pending row that no claim holds -> parked. A row leased to a relay (or to the
// hook's sync publish) is left alone: its holder is sending it. Placeholders: last_error,
// event_id.
inline constexpr std::string_view kOpsPark =
    "UPDATE room_outbox SET status = 'parked', last_error = ?, claim_token = NULL, "
    "parked_at_ms = " ROOM_OUTBOX_SERVER_NOW_MS ", updated_at_ms = " ROOM_OUTBOX_SERVER_NOW_MS
    " WHERE event_id = ? AND status = 'pending' "
    "AND (claim_token IS NULL OR next_attempt_at_ms <= " ROOM_OUTBOX_SERVER_NOW_MS ")";

// Parked -> pending, due at once and unlisted (the relay's listing puts the room on the schedule),
// retry_count, last_error and parked_at_ms kept: parked_at_ms on a
// pending row says it was parked and requeued, so [tencent_im.max_age_by_type] never expires it
// again (an operator's requeue means "send it").
#define ROOM_OUTBOX_REQUEUE_SET                                                      \
  "UPDATE room_outbox SET status = 'pending', claim_token = NULL, room_listed = 0, " \
  "next_attempt_at_ms = " ROOM_OUTBOX_SERVER_NOW_MS ", updated_at_ms = " ROOM_OUTBOX_SERVER_NOW_MS
// uk_event_id. Placeholder: event_id.
inline constexpr std::string_view kOpsRequeueEvent =
    ROOM_OUTBOX_REQUEUE_SET " WHERE event_id = ? AND status = 'parked'";
// idx_room_status, in batches. Placeholders: room_id, limit.
inline constexpr std::string_view kOpsRequeueRoom =
    ROOM_OUTBOX_REQUEUE_SET " WHERE room_id = ? AND status = 'parked' ORDER BY id LIMIT ?";
// idx_status_published (status first), in batches. Placeholder: limit.
inline constexpr std::string_view kOpsRequeueAllParked =
    ROOM_OUTBOX_REQUEUE_SET " WHERE status = 'parked' ORDER BY id LIMIT ?";
#undef ROOM_OUTBOX_REQUEUE_SET

// idx_status_published: published rows older than the cut-off only (never pending or parked),
// one batch per autocommit statement. Placeholders: cut-off ms, limit.
inline constexpr std::string_view kOpsPurgeOutbox =
    "DELETE FROM room_outbox WHERE status = 'published' AND published_at_ms < ? "
    "ORDER BY published_at_ms, id LIMIT ?";
inline constexpr std::string_view kOpsCountPurgeableOutbox =
    "SELECT COUNT(*) FROM room_outbox WHERE status = 'published' AND published_at_ms < ?";

// idx_room_due: rooms of the room schedule idle (no pending rows) since before the cut-off, one
// batch per autocommit statement. A room that gets rows again is listed anew by the next claim
// (kListRooms inserts it); a listing that runs first made it due, and the DELETE no longer
// matches it. Placeholders: cut-off ms, limit.
inline constexpr std::string_view kOpsPurgeIdleRooms =
    "DELETE FROM room_outbox_room WHERE due_at_ms = " ROOM_OUTBOX_IDLE_ROOM_MS
    " AND updated_at_ms < ? ORDER BY due_at_ms, room_id LIMIT ?";
inline constexpr std::string_view kOpsCountPurgeableIdleRooms =
    "SELECT COUNT(*) FROM room_outbox_room WHERE due_at_ms = " ROOM_OUTBOX_IDLE_ROOM_MS
    " AND updated_at_ms < ?";

// idx_created_at; a command whose events are not all published keeps its log row (idx_command_id).
// Placeholders: cut-off ms, limit.
#define ROOM_OUTBOX_PURGEABLE_COMMANDS                                    \
  " WHERE created_at_ms < ? AND NOT EXISTS (SELECT 1 FROM room_outbox o " \
  "WHERE o.command_id = room_command_log.command_id AND o.status <> 'published')"
inline constexpr std::string_view kOpsPurgeCommandLog =
    "DELETE FROM room_command_log" ROOM_OUTBOX_PURGEABLE_COMMANDS
    " ORDER BY created_at_ms, id LIMIT ?";
inline constexpr std::string_view kOpsCountPurgeableCommandLog =
    "SELECT COUNT(*) FROM room_command_log" ROOM_OUTBOX_PURGEABLE_COMMANDS;
#undef ROOM_OUTBOX_PURGEABLE_COMMANDS

// For the park policy ([outbox_worker] park_permanent_after; MariaDbRelayStore::MarkParked): a
// failed attempt that parks its row, or an expired row ([tencent_im.max_age_by_type], no attempt:
// retry_count + 0), for the holder of the claim only; a parked row heads no pack (pack_size 0).
// The history (schema 011) as kMarkFailed's. Primary key. Placeholders: retry_count increment (1
// or 0), last_error, entries (0 | 1), waited_ms, entry rest (NULL: none), id, token.
inline constexpr std::string_view kMarkParked =
    "UPDATE room_outbox SET status = 'parked', retry_count = retry_count + ?, last_error = ?, "
    "attempt_count = attempt_count + ?, " ROOM_OUTBOX_ATTEMPTS_APPEND
    ", pack_size = 0, claim_token = NULL, parked_at_ms = " ROOM_OUTBOX_SERVER_NOW_MS
    ", "
    "updated_at_ms = " ROOM_OUTBOX_SERVER_NOW_MS
    " "
    "WHERE id = ? AND claim_token = ? AND status = 'pending'";
#undef ROOM_OUTBOX_ATTEMPTS_APPEND
#undef ROOM_OUTBOX_ATTEMPTS_KEEP_CLOSE
#undef ROOM_OUTBOX_ATTEMPTS_KEEP_OPEN
#undef ROOM_OUTBOX_ATTEMPT_ENTRY

// --- the app's IM budget (core/app_budget: relays and sending hooks) ---
// room_outbox_im_member (schema/005), one row per sending process and app; every statement reads
// the primary key (app_key, member_id) or its app_key prefix.

// A member's heartbeat: its row, beat now, with its demand and share. The values are written
// twice rather than read back with VALUES(col), which MySQL 8.0.20 deprecates. Placeholders:
// app_key, member_id, demand, share, demand, share.
inline constexpr std::string_view kImMemberBeat =
    "INSERT INTO room_outbox_im_member (app_key, member_id, beat_ms, demand, share) "
    "VALUES (?, ?, " ROOM_OUTBOX_SERVER_NOW_MS
    ", ?, ?) "
    "ON DUPLICATE KEY UPDATE beat_ms = " ROOM_OUTBOX_SERVER_NOW_MS ", demand = ?, share = ?";

// The app's members as recorded, with the server's clock to judge who is live. Placeholder:
// app_key.
inline constexpr std::string_view kImMembers =
    "SELECT member_id, beat_ms, demand, share, " ROOM_OUTBOX_SERVER_NOW_MS
    " FROM room_outbox_im_member WHERE app_key = ?";

// Rows whose member stopped beating long ago (it did not leave cleanly). Placeholders: app_key,
// age in ms.
inline constexpr std::string_view kImMembersExpire =
    "DELETE FROM room_outbox_im_member WHERE app_key = ? AND beat_ms < " ROOM_OUTBOX_SERVER_NOW_MS
    " - ?";

// A member leaves. Placeholders: app_key, member_id.
inline constexpr std::string_view kImMemberLeave =
    "DELETE FROM room_outbox_im_member WHERE app_key = ? AND member_id = ?";

// A beat reads the members and writes its share under the app's named lock
// (AppBudgetLockName, 35 characters), so two members that beat at once never both count on the
// same part of the limit. GET_LOCK answers 1 (taken), 0 (not within the wait) or NULL (an error);
// no table, no privilege. Placeholders: name, wait seconds; then name.
inline constexpr std::string_view kImBudgetLock = "SELECT GET_LOCK(?, ?)";
inline constexpr std::string_view kImBudgetUnlock = "SELECT RELEASE_LOCK(?)";

// --- schema version (outbox-relay migrate, relay/src/migrate) ---
// schema/000_schema_version.sql makes the table; each schema file records its own number in it
// as its last statement, so a schema applied with other tools is recognised too.

// Whether the version table exists (1) or not (0), asked before reading it: a fresh database
// then answers no statement with an error (no 1146 in a managed server's error log and
// dashboards on every install). No placeholder.
inline constexpr std::string_view kSchemaVersionTable =
    "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() "
    "AND TABLE_NAME = 'room_outbox_schema_version'";

// The versions recorded, in order (the primary key).
inline constexpr std::string_view kSchemaVersions =
    "SELECT version FROM room_outbox_schema_version ORDER BY version";

// --- diagnostics (tests, benchmarks) ---

// No table: this session's handler read counters. Sent as text, not prepared: SHOW is not among
// MySQL's preparable statements.
inline constexpr std::string_view kSessionRowsRead = "SHOW SESSION STATUS LIKE 'Handler_read%'";

// --- the table ---

// How a statement is built from its fragments for a size n (statement_text.h).
enum class Shape : uint8_t {
  kFixed,     // prefix
  kIdList,    // prefix "(?, ..., ?)" suffix: n placeholders (id_lists.h sizes)
  kUnionAll,  // "(" part ")" joined by " UNION ALL ", n parts (id_lists.h sizes)
  kRows,      // prefix, n parts joined by ", ", suffix (1..kMaxRowsPerOutboxInsert)
  kCaseList,  // prefix, n parts, suffix "(?, ..., ?)" (id_lists.h sizes)
};

struct Fragments {
  std::string_view prefix;
  std::string_view part;
  std::string_view suffix;
};

struct Statement {
  std::string_view name;  // in error messages and as the prepared statement's key
  Shape shape;
  // The text of each set; nullopt: the set never sends this statement.
  std::optional<Fragments> mariadb;
  std::optional<Fragments> mysql;
  // Sent as text, never prepared (it carries no value and is not preparable everywhere).
  bool text_protocol = false;
};

// One text for both sets.
constexpr Statement Shared(std::string_view name, Shape shape, Fragments text) {
  return Statement{name, shape, text, text};
}
constexpr Statement Shared(std::string_view name, std::string_view text) {
  return Shared(name, Shape::kFixed, Fragments{text, {}, {}});
}
// A text per set.
constexpr Statement PerSet(std::string_view name, Shape shape, Fragments mariadb, Fragments mysql) {
  return Statement{name, shape, mariadb, mysql};
}
constexpr Statement MariaDbOnly(std::string_view name, std::string_view text) {
  return Statement{name, Shape::kFixed, Fragments{text, {}, {}}, std::nullopt};
}
constexpr Statement MySqlOnly(std::string_view name, std::string_view text) {
  return Statement{name, Shape::kFixed, std::nullopt, Fragments{text, {}, {}}};
}
// One text for both sets, sent as text (no value, nothing to prepare).
constexpr Statement SharedText(std::string_view name, std::string_view text) {
  return Statement{name, Shape::kFixed, Fragments{text, {}, {}}, Fragments{text, {}, {}},
                   /*text_protocol=*/true};
}

// Every statement the stores send, each an entry of its own: a program holds the text of the
// statements it uses and no other (the hook's library none of the relay's). Composed statements
// (statement_text.h) name their fragments: a prefix, a repeated part and a suffix.
namespace Stmt {
inline constexpr Statement kInsertCommandLog =
    PerSet("insert_command_log", Shape::kFixed, {sql::kInsertCommandLog, {}, {}},
           {sql::kInsertCommandLogPlain, {}, {}});
inline constexpr Statement kInsertCommandLogChecked =
    MariaDbOnly("insert_command_log_checked", sql::kInsertCommandLogChecked);
inline constexpr Statement kInsertOutbox =
    PerSet("insert_outbox_rows", Shape::kRows,
           {sql::kInsertOutboxHead, sql::kInsertOutboxRow, sql::kInsertOutboxReturning},
           {sql::kInsertOutboxHead, sql::kInsertOutboxRow, {}});
inline constexpr Statement kCommitReadBack = MySqlOnly("commit_read_back", sql::kCommitReadBack);
inline constexpr Statement kCommitReadBackChecked =
    MySqlOnly("commit_read_back_checked", sql::kCommitReadBackChecked);
inline constexpr Statement kFindCommand = Shared("find_command", sql::kFindCommand);
inline constexpr Statement kServerReadOnly = Shared("server_read_only", sql::kServerReadOnly);
inline constexpr Statement kCommandRows = Shared("command_rows", sql::kCommandRows);
inline constexpr Statement kRecordPackSize = Shared("record_pack_size", sql::kRecordPackSize);
inline constexpr Statement kServerNow = Shared("server_now", sql::kServerNow);
inline constexpr Statement kServerNowRooms = Shared("server_now_rooms", sql::kServerNowRooms);
inline constexpr Statement kClaimWindow = Shared("claim_window", sql::kClaimWindow);
inline constexpr Statement kListArrivals = Shared("list_arrivals", sql::kListArrivals);
inline constexpr Statement kListRooms =
    Shared("list_rooms", Shape::kIdList, {sql::kListRoomsPrefix, {}, sql::kListRoomsSuffix});
inline constexpr Statement kListMark =
    Shared("list_mark", Shape::kIdList, {sql::kListMarkPrefix, {}, {}});
inline constexpr Statement kDueRooms = Shared("due_rooms", sql::kDueRooms);
inline constexpr Statement kRoomsBacklog = Shared("rooms_backlog", sql::kRoomsBacklog);
inline constexpr Statement kAnyDue = Shared("any_due", sql::kAnyDue);
inline constexpr Statement kAnyDueRooms = Shared("any_due_rooms", sql::kAnyDueRooms);
inline constexpr Statement kRoomPrefix =
    Shared("room_prefix", Shape::kUnionAll, {{}, sql::kRoomPrefixPart, {}});
inline constexpr Statement kRoomAfter =
    Shared("room_after", Shape::kUnionAll, {{}, sql::kRoomAfterPart, {}});
inline constexpr Statement kLockRows =
    Shared("lock_rows", Shape::kIdList, {sql::kLockRowsPrefix, {}, sql::kLockRowsSuffix});
inline constexpr Statement kLease = Shared("lease", Shape::kIdList, {sql::kLeasePrefix, {}, {}});
inline constexpr Statement kSchedule = Shared(
    "schedule", Shape::kCaseList, {sql::kScheduleHead, sql::kScheduleWhen, sql::kScheduleTail});
inline constexpr Statement kRoomsDue = Shared(
    "rooms_due", Shape::kCaseList, {sql::kRoomsDueHead, sql::kScheduleWhen, sql::kRoomsDueTail});
inline constexpr Statement kRowRooms =
    Shared("row_rooms", Shape::kIdList, {sql::kRowRoomsPrefix, {}, sql::kRowRoomsSuffix});
inline constexpr Statement kRoomsProgress =
    Shared("rooms_progress", Shape::kIdList, {sql::kRoomsProgressPrefix, {}, {}});
inline constexpr Statement kRoomsRetry =
    Shared("rooms_retry", Shape::kIdList, {sql::kRoomsRetryPrefix, {}, {}});
inline constexpr Statement kMarkPublished =
    Shared("mark_published", Shape::kIdList, {sql::kMarkPublishedPrefix, {}, {}});
inline constexpr Statement kRelayMarkPublished = Shared(
    "relay_mark_published", Shape::kCaseList,
    {sql::kRelayMarkPublishedHead, sql::kRelayMarkPublishedWhen, sql::kRelayMarkPublishedTail});
inline constexpr Statement kRelease =
    Shared("release", Shape::kIdList, {sql::kReleasePrefix, {}, {}});
inline constexpr Statement kRelayRelease =
    Shared("relay_release", Shape::kIdList, {sql::kRelayReleasePrefix, {}, {}});
inline constexpr Statement kMarkFailed = Shared("mark_failed", sql::kMarkFailed);
inline constexpr Statement kMarkParked = Shared("mark_parked", sql::kMarkParked);
inline constexpr Statement kNodeLockTake = Shared("node_lock_take", sql::kNodeLockTake);
inline constexpr Statement kReleaseNodeLeases =
    Shared("release_node_leases", sql::kReleaseNodeLeases);
inline constexpr Statement kRelayRunBeat = Shared("relay_run_beat", sql::kRelayRunBeat);
inline constexpr Statement kRelayRunsForgetNode =
    Shared("relay_runs_forget_node", sql::kRelayRunsForgetNode);
inline constexpr Statement kRelayRunsGone = Shared("relay_runs_gone", sql::kRelayRunsGone);
inline constexpr Statement kReleaseRunLeases = Shared("release_run_leases", sql::kReleaseRunLeases);
inline constexpr Statement kRelayRunForget = Shared("relay_run_forget", sql::kRelayRunForget);
inline constexpr Statement kStats = Shared("stats", sql::kStats);
inline constexpr Statement kOpsServerNowMinus =
    Shared("ops_server_now_minus", sql::kOpsServerNowMinus);
inline constexpr Statement kOpsSample = Shared("ops_sample", sql::kOpsSample);
inline constexpr Statement kOpsCountParked = Shared("ops_count_parked", sql::kOpsCountParked);
inline constexpr Statement kOpsTopRooms = Shared("ops_top_rooms", sql::kOpsTopRooms);
inline constexpr Statement kOpsTopRoomsByBacklog =
    Shared("ops_top_rooms_by_backlog", sql::kOpsTopRoomsByBacklog);
inline constexpr Statement kOpsShow = Shared("ops_show", sql::kOpsShow);
inline constexpr Statement kOpsPark = Shared("ops_park", sql::kOpsPark);
inline constexpr Statement kOpsRequeueEvent = Shared("ops_requeue_event", sql::kOpsRequeueEvent);
inline constexpr Statement kOpsRequeueRoom = Shared("ops_requeue_room", sql::kOpsRequeueRoom);
inline constexpr Statement kOpsRequeueAllParked =
    Shared("ops_requeue_all_parked", sql::kOpsRequeueAllParked);
inline constexpr Statement kOpsPurgeOutbox = Shared("ops_purge_outbox", sql::kOpsPurgeOutbox);
inline constexpr Statement kOpsCountPurgeableOutbox =
    Shared("ops_count_purgeable_outbox", sql::kOpsCountPurgeableOutbox);
inline constexpr Statement kOpsPurgeCommandLog =
    Shared("ops_purge_command_log", sql::kOpsPurgeCommandLog);
inline constexpr Statement kOpsPurgeIdleRooms =
    Shared("ops_purge_idle_rooms", sql::kOpsPurgeIdleRooms);
inline constexpr Statement kOpsCountPurgeableIdleRooms =
    Shared("ops_count_purgeable_idle_rooms", sql::kOpsCountPurgeableIdleRooms);
inline constexpr Statement kOpsCountPurgeableCommandLog =
    Shared("ops_count_purgeable_command_log", sql::kOpsCountPurgeableCommandLog);
inline constexpr Statement kImMemberBeat = Shared("im_member_beat", sql::kImMemberBeat);
inline constexpr Statement kImMembers = Shared("im_members", sql::kImMembers);
inline constexpr Statement kImMembersExpire = Shared("im_members_expire", sql::kImMembersExpire);
inline constexpr Statement kImMemberLeave = Shared("im_member_leave", sql::kImMemberLeave);
inline constexpr Statement kImBudgetLock = Shared("im_budget_lock", sql::kImBudgetLock);
inline constexpr Statement kImBudgetUnlock = Shared("im_budget_unlock", sql::kImBudgetUnlock);
inline constexpr Statement kSchemaVersionTable =
    Shared("schema_version_table", sql::kSchemaVersionTable);
inline constexpr Statement kSchemaVersions = Shared("schema_versions", sql::kSchemaVersions);
inline constexpr Statement kSessionRowsRead =
    SharedText("session_rows_read", sql::kSessionRowsRead);
inline constexpr Statement kSessionIsolation =
    SharedText("session_isolation", sql::kSessionIsolation);
inline constexpr Statement kSessionTimeZone =
    SharedText("session_time_zone", sql::kSessionTimeZone);
inline constexpr Statement kSessionSqlMode = SharedText("session_sql_mode", sql::kSessionSqlMode);
inline constexpr Statement kSessionLockWait =
    SharedText("session_lock_wait", sql::kSessionLockWait);
inline constexpr Statement kBegin = SharedText("begin", sql::kBegin);
inline constexpr Statement kCommit = SharedText("commit", sql::kCommit);
inline constexpr Statement kRollback = SharedText("rollback", sql::kRollback);
}  // namespace Stmt

// Every statement, for the tools that list them all (the grammar check, the statement tests).
// Its size is the number of entries (never a hand-kept count, so no entry can be null); the
// check below refuses a duplicate at compile time, and StatementListTest refuses a statement of
// namespace Stmt that is not listed here.
inline constexpr std::array kStatements = {
    &Stmt::kInsertCommandLog,
    &Stmt::kInsertCommandLogChecked,
    &Stmt::kInsertOutbox,
    &Stmt::kCommitReadBack,
    &Stmt::kCommitReadBackChecked,
    &Stmt::kFindCommand,
    &Stmt::kServerReadOnly,
    &Stmt::kCommandRows,
    &Stmt::kRecordPackSize,
    &Stmt::kServerNow,
    &Stmt::kServerNowRooms,
    &Stmt::kClaimWindow,
    &Stmt::kListArrivals,
    &Stmt::kListRooms,
    &Stmt::kListMark,
    &Stmt::kDueRooms,
    &Stmt::kRoomsBacklog,
    &Stmt::kAnyDue,
    &Stmt::kAnyDueRooms,
    &Stmt::kRoomPrefix,
    &Stmt::kRoomAfter,
    &Stmt::kLockRows,
    &Stmt::kLease,
    &Stmt::kSchedule,
    &Stmt::kRoomsDue,
    &Stmt::kRowRooms,
    &Stmt::kRoomsProgress,
    &Stmt::kRoomsRetry,
    &Stmt::kMarkPublished,
    &Stmt::kRelayMarkPublished,
    &Stmt::kRelease,
    &Stmt::kRelayRelease,
    &Stmt::kMarkFailed,
    &Stmt::kMarkParked,
    &Stmt::kNodeLockTake,
    &Stmt::kReleaseNodeLeases,
    &Stmt::kRelayRunBeat,
    &Stmt::kRelayRunsForgetNode,
    &Stmt::kRelayRunsGone,
    &Stmt::kReleaseRunLeases,
    &Stmt::kRelayRunForget,
    &Stmt::kStats,
    &Stmt::kOpsServerNowMinus,
    &Stmt::kOpsSample,
    &Stmt::kOpsCountParked,
    &Stmt::kOpsTopRooms,
    &Stmt::kOpsTopRoomsByBacklog,
    &Stmt::kOpsShow,
    &Stmt::kOpsPark,
    &Stmt::kOpsRequeueEvent,
    &Stmt::kOpsRequeueRoom,
    &Stmt::kOpsRequeueAllParked,
    &Stmt::kOpsPurgeOutbox,
    &Stmt::kOpsCountPurgeableOutbox,
    &Stmt::kOpsPurgeCommandLog,
    &Stmt::kOpsCountPurgeableCommandLog,
    &Stmt::kOpsPurgeIdleRooms,
    &Stmt::kOpsCountPurgeableIdleRooms,
    &Stmt::kImMemberBeat,
    &Stmt::kImMembers,
    &Stmt::kImMembersExpire,
    &Stmt::kImMemberLeave,
    &Stmt::kImBudgetLock,
    &Stmt::kImBudgetUnlock,
    &Stmt::kSchemaVersionTable,
    &Stmt::kSchemaVersions,
    &Stmt::kSessionRowsRead,
    &Stmt::kSessionIsolation,
    &Stmt::kSessionTimeZone,
    &Stmt::kSessionSqlMode,
    &Stmt::kSessionLockWait,
    &Stmt::kBegin,
    &Stmt::kCommit,
    &Stmt::kRollback,
};

// True when every entry has a name and no two entries share one (an entry listed twice shares
// its name). Names only: an address comparison is no constant expression in a sanitizer build.
constexpr bool EveryStatementListedOnce() {
  for (size_t i = 0; i < kStatements.size(); ++i) {
    if (kStatements[i]->name.empty()) return false;
    for (size_t j = i + 1; j < kStatements.size(); ++j) {
      if (kStatements[i]->name == kStatements[j]->name) return false;
    }
  }
  return true;
}
static_assert(EveryStatementListedOnce(), "kStatements: an entry is unnamed or listed twice");

#undef ROOM_OUTBOX_CLAIM_COLUMNS
}  // namespace room_outbox::core::sql

#undef ROOM_OUTBOX_IDLE_ROOM_MS
#undef ROOM_OUTBOX_SERVER_NOW_MS
