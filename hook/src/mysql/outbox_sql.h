// Every SQL text of the outbox store, in one place. Each statement names the index it relies on
// (schema/*.sql): idx_pending_due (status, next_attempt_at_ms, id), idx_room_status (room_id,
// status, id), idx_command_id (command_id), uk_command_id, uk_event_id, and the primary key.
//
// Statements that take a list of ids or rooms end in " IN " and get a placeholder list appended
// (id_lists.h), in a few fixed sizes, so each has a bounded number of prepared shapes.
#pragma once

#include <string_view>

namespace room_outbox::sql {

// --- commit (hook) ---
//
// Every absolute time the commit writes is the database server's clock, read in the statement
// itself: a hook host whose wall clock is off cannot make its rows due too early (duplicates) or
// too late (stalls). NOW(3) is the time the statement started, the same for every use in it.
// The macro only splices the one expression into the literals below; it is #undef'd at the end
// of this section, and kServerNowMs is the expression for everyone else.
#define ROOM_OUTBOX_SERVER_NOW_MS "CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED)"
inline constexpr std::string_view kServerNowMs = ROOM_OUTBOX_SERVER_NOW_MS;

// uk_command_id: a repeated command_id fails with a duplicate-key error and nothing is written.
// Placeholders: command_id, room_id, command_type, request_id, room_seq, payload.
inline constexpr std::string_view kInsertCommandLog =
    "INSERT INTO room_command_log (command_id, room_id, command_type, request_id, room_seq, "
    "payload, created_at_ms) VALUES (?, ?, ?, ?, ?, ?, " ROOM_OUTBOX_SERVER_NOW_MS ")";

// idx_room_status: one dive to the room's first pending row, plus the server's clock. Runs in
// the commit transaction just before the outbox insert. Placeholder: room_id.
inline constexpr std::string_view kCommitCheck =
    "SELECT " ROOM_OUTBOX_SERVER_NOW_MS ", EXISTS (SELECT 1 FROM room_outbox "
    "WHERE room_id = ? AND status = 'pending' LIMIT 1)";

// uk_event_id. A pending row leased to the hook's sync publish until the server's now + lease.
// Placeholders: event_id, event_type, room_id, command_id, request_id, envelope, lease_ms,
// claim_token.
inline constexpr std::string_view kInsertOutboxPending =
    "INSERT INTO room_outbox (event_id, event_type, room_id, command_id, request_id, envelope, "
    "status, retry_count, next_attempt_at_ms, claim_token, created_at_ms, updated_at_ms) "
    "VALUES (?, ?, ?, ?, ?, ?, 'pending', 0, " ROOM_OUTBOX_SERVER_NOW_MS " + ?, ?, "
    ROOM_OUTBOX_SERVER_NOW_MS ", " ROOM_OUTBOX_SERVER_NOW_MS ")";

// uk_event_id. A row of a type never sent (skip_event_types): published at once, never claimed.
// Placeholders: event_id, event_type, room_id, command_id, request_id, envelope.
inline constexpr std::string_view kInsertOutboxPublished =
    "INSERT INTO room_outbox (event_id, event_type, room_id, command_id, request_id, envelope, "
    "status, retry_count, next_attempt_at_ms, claim_token, created_at_ms, updated_at_ms, "
    "published_at_ms) VALUES (?, ?, ?, ?, ?, ?, 'published', 0, " ROOM_OUTBOX_SERVER_NOW_MS
    ", NULL, " ROOM_OUTBOX_SERVER_NOW_MS ", " ROOM_OUTBOX_SERVER_NOW_MS ", "
    ROOM_OUTBOX_SERVER_NOW_MS ")";

// uk_command_id, a locking read: when the command's transaction is still open on the server
// (its COMMIT in flight), this waits for its end instead of reading the old state.
// Placeholder: command_id.
inline constexpr std::string_view kFindCommand =
    "SELECT id FROM room_command_log WHERE command_id = ? LOCK IN SHARE MODE";

// idx_command_id: the command's outbox rows in commit order. Placeholder: command_id.
inline constexpr std::string_view kCommandRows =
    "SELECT id FROM room_outbox WHERE command_id = ? ORDER BY id";

#undef ROOM_OUTBOX_SERVER_NOW_MS

// --- claim (relay) ---

// Walks idx_pending_due (status, next_attempt_at_ms, id) in order: no filesort, and rows that
// another claim holds are skipped instead of waited for. For a table of a few rows the optimizer
// reads them all and sorts them instead, which is cheaper there. Forcing the index was measured
// (make bench, rows 1a') to slow a 50k-row backlog drain by about a third, so it is not forced.
// Placeholders: now_ms, limit.
inline constexpr std::string_view kClaimDue =
    "SELECT id, event_id, event_type, room_id, envelope, retry_count, created_at_ms "
    "FROM room_outbox WHERE status = 'pending' AND next_attempt_at_ms <= ? "
    "ORDER BY next_attempt_at_ms, id LIMIT ? FOR UPDATE SKIP LOCKED";

// The same walk, leaving out rows whose room's oldest pending row is not due (failed and
// waiting for its retry, or leased to a publish in flight). Without this a room blocked behind
// its head could fill every batch with rows that cannot be claimed and starve all other rooms.
// The head lookup is one dive into idx_room_status (room_id, status, id) per row.
// Placeholders: now_ms, now_ms (head check), limit.
inline constexpr std::string_view kClaimDueRoomHeads =
    "SELECT o.id, o.event_id, o.event_type, o.room_id, o.envelope, o.retry_count, "
    "o.created_at_ms FROM room_outbox o "
    "WHERE o.status = 'pending' AND o.next_attempt_at_ms <= ? "
    "AND (SELECT h.next_attempt_at_ms FROM room_outbox h FORCE INDEX (idx_room_status) "
    "WHERE h.room_id = o.room_id "
    "AND h.status = 'pending' ORDER BY h.id LIMIT 1) <= ? "
    "ORDER BY o.next_attempt_at_ms, o.id LIMIT ? FOR UPDATE SKIP LOCKED";

// idx_room_status: the pending rows of the listed rooms up to max_id. Placeholders: rooms...,
// max_id (appended after the list).
inline constexpr std::string_view kRoomPendingPrefix =
    "SELECT room_id, id, next_attempt_at_ms FROM room_outbox WHERE status = 'pending' "
    "AND room_id IN ";
inline constexpr std::string_view kRoomPendingSuffix = " AND id <= ? ORDER BY room_id, id";

// idx_room_status. Placeholders: head time, now_ms, room_id, head time.
inline constexpr std::string_view kPushBackRoom =
    "UPDATE room_outbox SET next_attempt_at_ms = ?, updated_at_ms = ? "
    "WHERE room_id = ? AND status = 'pending' AND "
    "next_attempt_at_ms < ? AND claim_token IS NULL";

inline constexpr std::string_view kPaceSlotStart = "SET @room_outbox_slot = ?";

// idx_room_status. Placeholders: unpaced types (JSON array), pace_ms, now_ms, room_id,
// last kept id, now_ms.
inline constexpr std::string_view kPaceRoom =
    "UPDATE room_outbox SET next_attempt_at_ms = (@room_outbox_slot := @room_outbox_slot + "
    "IF(JSON_CONTAINS(?, JSON_QUOTE(event_type)), 0, ?)), updated_at_ms = ? "
    "WHERE room_id = ? AND status = 'pending' AND id > ? AND next_attempt_at_ms <= ? "
    "AND claim_token IS NULL ORDER BY id";

inline constexpr std::string_view kPaceSlotRead = "SELECT @room_outbox_slot";

// Primary key. Placeholders: token, lease_until_ms, now_ms, ids...
inline constexpr std::string_view kLeasePrefix =
    "UPDATE room_outbox SET claim_token = ?, next_attempt_at_ms = ?, updated_at_ms = ? "
    "WHERE status = 'pending' AND id IN ";

// --- marks (relay and hook) ---

// Primary key; only rows still held by the claim token. Placeholders: the SET values, token,
// ids...
inline constexpr std::string_view kMarkPublishedPrefix =
    "UPDATE room_outbox SET status = 'published', last_error = NULL, published_at_ms = ?, "
    "updated_at_ms = ?, claim_token = NULL "
    "WHERE claim_token = ? AND status = 'pending' AND id IN ";

inline constexpr std::string_view kReleasePrefix =
    "UPDATE room_outbox SET next_attempt_at_ms = ?, claim_token = NULL, updated_at_ms = ? "
    "WHERE claim_token = ? AND status = 'pending' AND id IN ";

// Primary key. Placeholders: last_error, next_attempt_at_ms, now_ms, id, token.
inline constexpr std::string_view kMarkFailed =
    "UPDATE room_outbox SET retry_count = retry_count + 1, last_error = ?, "
    "next_attempt_at_ms = ?, updated_at_ms = ?, claim_token = NULL "
    "WHERE id = ? AND claim_token = ? AND status = 'pending'";

// --- stats ---

// idx_pending_due: the cost follows the pending rows, not the table.
inline constexpr std::string_view kStats =
    "SELECT COUNT(*), COALESCE(MIN(created_at_ms), 0) FROM room_outbox "
    "WHERE status = 'pending'";

// --- operator commands ---
// Used by relay/src/ops (outbox-relay stats|show|park|requeue|purge). Every absolute time is the
// database server's clock, read inside the statement (kServerNowMs), never the host's. Each
// statement is one short autocommit transaction: no operator command holds locks across calls.
// Schema 003 adds status 'parked', parked_at_ms and idx_status_published (status,
// published_at_ms, id); idx_created_at (created_at_ms, id) on room_command_log.

#define ROOM_OUTBOX_SERVER_NOW_MS "CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED)"

// The server's clock in epoch milliseconds, minus a duration (ms): the purge's cut-off, read once
// per run so every batch and the dry run use the same one.
inline constexpr std::string_view kOpsServerNowMinus =
    "SELECT " ROOM_OUTBOX_SERVER_NOW_MS ", " ROOM_OUTBOX_SERVER_NOW_MS " - ?";

// Rows per status (a loose scan of idx_pending_due / idx_status_published).
inline constexpr std::string_view kOpsCountByStatus =
    "SELECT status, COUNT(*) FROM room_outbox GROUP BY status";

// idx_status_published (status first): the parked rows, for room_outbox_parked_rows.
inline constexpr std::string_view kOpsCountParked =
    "SELECT COUNT(*) FROM room_outbox WHERE status = 'parked'";

// idx_pending_due: the oldest pending row's age on the server's clock (0 when none).
inline constexpr std::string_view kOpsOldestPendingAge =
    "SELECT COALESCE(" ROOM_OUTBOX_SERVER_NOW_MS " - MIN(created_at_ms), 0) FROM room_outbox "
    "WHERE status = 'pending'";

// Rooms with pending rows: each room's pending count and its head row (lowest pending id),
// rooms with the oldest heads first. Placeholder: limit.
inline constexpr std::string_view kOpsTopRooms =
    "SELECT h.room_id, h.pending, o.event_id, o.retry_count, o.last_error FROM "
    "(SELECT room_id, COUNT(*) AS pending, MIN(id) AS head_id FROM room_outbox "
    "WHERE status = 'pending' GROUP BY room_id) h "
    "JOIN room_outbox o ON o.id = h.head_id ORDER BY o.id LIMIT ?";

// Rooms whose later pending rows wait behind a head row that has failed at least once.
inline constexpr std::string_view kOpsRoomsHeldBack =
    "SELECT COUNT(*) FROM "
    "(SELECT MIN(id) AS head_id, COUNT(*) AS pending FROM room_outbox "
    "WHERE status = 'pending' GROUP BY room_id) h "
    "JOIN room_outbox o ON o.id = h.head_id WHERE h.pending > 1 AND o.retry_count > 0";

// uk_event_id. The last column says whether a claim holds the row right now (a token and a
// lease not yet over on the server's clock).
inline constexpr std::string_view kOpsShow =
    "SELECT event_id, event_type, room_id, status, retry_count, last_error, created_at_ms, "
    "updated_at_ms, published_at_ms, next_attempt_at_ms, parked_at_ms, envelope, command_id, "
    "request_id, "
    "(claim_token IS NOT NULL AND next_attempt_at_ms > " ROOM_OUTBOX_SERVER_NOW_MS ") "
    "FROM room_outbox WHERE event_id = ?";

// uk_event_id. A pending row that no claim holds -> parked. A row leased to a relay (or to the
// hook's sync publish) is left alone: its holder is sending it. Placeholders: last_error,
// event_id.
inline constexpr std::string_view kOpsPark =
    "UPDATE room_outbox SET status = 'parked', last_error = ?, claim_token = NULL, "
    "parked_at_ms = " ROOM_OUTBOX_SERVER_NOW_MS ", updated_at_ms = " ROOM_OUTBOX_SERVER_NOW_MS
    " WHERE event_id = ? AND status = 'pending' "
    "AND (claim_token IS NULL OR next_attempt_at_ms <= " ROOM_OUTBOX_SERVER_NOW_MS ")";

// Parked -> pending, due at once, retry_count and last_error kept.
#define ROOM_OUTBOX_REQUEUE_SET                                                        \
  "UPDATE room_outbox SET status = 'pending', parked_at_ms = NULL, claim_token = NULL, " \
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

// idx_created_at; a command whose events are not all published keeps its log row (idx_command_id).
// Placeholders: cut-off ms, limit.
#define ROOM_OUTBOX_PURGEABLE_COMMANDS                                                \
  " WHERE created_at_ms < ? AND NOT EXISTS (SELECT 1 FROM room_outbox o "             \
  "WHERE o.command_id = room_command_log.command_id AND o.status <> 'published')"
inline constexpr std::string_view kOpsPurgeCommandLog =
    "DELETE FROM room_command_log" ROOM_OUTBOX_PURGEABLE_COMMANDS
    " ORDER BY created_at_ms, id LIMIT ?";
inline constexpr std::string_view kOpsCountPurgeableCommandLog =
    "SELECT COUNT(*) FROM room_command_log" ROOM_OUTBOX_PURGEABLE_COMMANDS;
#undef ROOM_OUTBOX_PURGEABLE_COMMANDS

// For the park policy ([outbox_worker] park_permanent_after; the worker's store call is still to
// be written): a failed attempt that parks its row, for the holder of the claim only. Primary
// key. Placeholders: last_error, id, token.
inline constexpr std::string_view kMarkParked =
    "UPDATE room_outbox SET status = 'parked', retry_count = retry_count + 1, last_error = ?, "
    "claim_token = NULL, parked_at_ms = " ROOM_OUTBOX_SERVER_NOW_MS ", "
    "updated_at_ms = " ROOM_OUTBOX_SERVER_NOW_MS " "
    "WHERE id = ? AND claim_token = ? AND status = 'pending'";
#undef ROOM_OUTBOX_SERVER_NOW_MS

}  // namespace room_outbox::sql
