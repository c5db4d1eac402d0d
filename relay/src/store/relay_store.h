// RelayStore: every database operation of the relay's worker loop, behind one seam. The MariaDB
// implementation is MariaDbRelayStore (store/mariadb_relay_store.h); unit tests use
// MockRelayStore (tests/mocks/mock_relay_store.h). The hook writes the rows this store claims
// through a store of its own (hook/src/store/hook_store.h); docs/sql-contract.md is the table
// contract between them.
//
// One clock: every absolute time of the relay side (due times, leases, interval slots, retry times,
// ages) is the database server's. The relay passes durations only (lease_ms, retry_after_ms,
// room_min_interval_ms); the store adds them to the server's now inside the call, and hands back
// what it decided relative to that now (Claim::server_now_ms, PacedRoom::paced_for_ms). A relay
// host's wall clock can be wrong by minutes without moving any row.
//
// Claiming: ClaimDue picks due pending rows (status='pending' AND next_attempt_at_ms <= server
// now) in one short transaction (read -> plan -> write, see claim_plan.h), with per-room order
// through the room schedule (schema 009: the rooms due, and the rows that arrived since the last
// claim put on it), stamps them with a fresh claim token and a lease (next_attempt_at_ms = server
// now + lease), commits and returns them. Every later write of the row's result names that token,
// so a relay whose lease ran out cannot overwrite the result of the relay that took the row over. A
// relay that dies leaves its rows pending; they are due again when the lease ends. A claim whose
// COMMIT got no answer (the connection cut while it was in flight) fails with kUnavailable, and the
// lease it may have left on the server is given back (by its token, due at once) before the store's
// next claim.
//
// Thread-safety: a RelayStore owns one connection; use it from one thread at a time.
// Connection loss: the call fails with kUnavailable and the next call reconnects.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/result.h"
#include "store/room_rules.h"

namespace room_outbox::relay {

// One room_outbox row as the relay sees it.
struct OutboxRow {
  int64_t id = 0;
  std::string event_id;
  std::string event_type;
  std::string room_id;
  std::string envelope;  // JSON text as stored; may be undecodable
  int64_t retry_count = 0;
  int64_t created_at_ms = 0;
  // Definite drops so far (schema/004: IM answered OK + MsgDropReason): the drop_generation of
  // the row's next send, so its Random changes after a drop and only then.
  uint32_t drop_count = 0;
  // parked_at_ms IS NOT NULL: the row was parked and an operator requeued it since (requeue keeps
  // parked_at_ms). Such a row never expires again (ExpiryPolicy).
  bool parked_before = false;
  // schema/007: > 0 when the row headed a pack (pack_max_events) whose send failed without a
  // definite drop: that many events. Its next send is the same pack again (PackRule), so the
  // body, and its Random, are the same.
  uint32_t pack_size = 0;
};

// A paced room: one that room_min_interval holds back, for `paced_for_ms` from the server's now
// on (a duration, never an absolute time).
//   In ClaimOptions: a room this relay sent to less than room_min_interval ago; it may not be
//     sent to again before paced_for_ms has passed (rows_scheduled is not used).
//   In a Claim: a room whose locked rows the claim gave interval slots after what it leased (a run
//     cut at run_cut_rows, a room's second row, a paced room of the options); paced_for_ms runs
//     from the claim's server_now_ms to the last of those slots (0 when none was scheduled), and
//     the relay adds it to its own monotonic clock.
struct PacedRoom {
  std::string room_id;
  uint64_t rows_scheduled = 0;  // locked rows of the room given a later next_attempt_at_ms
  int64_t paced_for_ms = 0;
};

struct ClaimOptions {
  // At most this many messages (batch_size): with per-room order a message is a room's pack of up
  // to rooms.pack_events consecutive rows (its recorded pack first); without it, one row.
  size_t limit = 100;
  int64_t lease_ms = 30000;  // claimed rows are not due again before server now + lease
  RoomRules rooms;           // per-room order, the run cut, the types sent without a send
  // Per-room order with room_min_interval_ms > 0: the paced rooms of this relay (see PacedRoom).
  // Their rows are not leased; the rows of such a room the claim holds locked get interval slots
  // from server now + paced_for_ms on (one room_min_interval_ms apart), so later claims take them
  // when the room may be sent to again, instead of a round waiting out room_min_interval.
  std::vector<PacedRoom> paced_rooms;
  // The claim's token starts with this (core::NewRelayClaimToken: a relay daemon's node and run,
  // NodeLockedStore sets it); empty: a token of 32 random hex characters (core::NewClaimToken).
  std::string token_prefix;
};

struct Claim {
  std::string token;            // names this claim in every later write
  int64_t server_now_ms = 0;    // the server time the claim used (read once, in its transaction)
  int64_t lease_until_ms = 0;   // server time: server_now_ms + lease_ms
  std::vector<OutboxRow> rows;  // ordered by id
  // The scan stopped at the limit: more rows may be due even when per-room order left some of
  // the selection out and `rows` is shorter than the limit.
  bool more_due = false;
  std::vector<PacedRoom> paced_rooms;  // rooms given interval slots (more_due is then set)
  // How long after server_now_ms the earliest room (per-room order; pending row without it) that
  // was not yet due then comes due (read at the claim's start: a lease held by the hook's sync
  // publish or another claim, a retry, an interval slot; and the rooms this claim gave a later due
  // time); nullopt when there was none.
  std::optional<int64_t> next_due_in_ms;
  // Per-room order: rows that arrived (or came back) since the last claim and that this claim put
  // on the room schedule (its listing).
  uint64_t rows_listed = 0;
};

// One entry of a row's attempt history (schema 011, room_outbox.attempts), written by the mark
// of the row's outcome in the same statement: an attempt, a skip or an expiry
// (store/attempt_history.h makes it). A note without text writes no entry.
struct AttemptNote {
  // When the outcome was known (the answer came): the mark writes the database server's now
  // minus the time since, so a result written late (UnwrittenResults) keeps its time.
  std::chrono::steady_clock::time_point known_at{};
  // The entry after its time: node_id, pack_events, outcome, detail, latency_ms, tab-separated,
  // without a newline.
  std::string text;

  bool empty() const { return text.empty(); }
  // Milliseconds from known_at to now (0 when it lies ahead).
  int64_t WaitedMs() const;
};

// The result of one failed attempt.
struct FailedAttempt {
  int64_t id = 0;
  std::string error;           // short; stored bounded in last_error
  int64_t retry_after_ms = 0;  // due again at server now + this (negative counts as 0)
  // IM definitely did not deliver it (PublishOutcome::definite_drop): drop_count + 1.
  bool dropped = false;
  // The first row of a pack of 2+ events that IM did not definitely drop: the pack's events
  // (pack_size); 0 otherwise.
  uint32_t pack_size = 0;
  // A delivery attempt was made (retry_count + 1). False only for a row parked without one: an
  // expired row (MarkParked, [tencent_im.max_age_by_type]) keeps its retry_count.
  bool attempted = true;
  AttemptNote note{};  // the history entry; empty: none
};

// Computed by the server in two statements: one whose cost follows the pending rows, one over the
// rooms' heads.
struct OutboxStats {
  int64_t pending = 0;  // rows with status='pending'
  // Server now - MIN(created_at_ms) over the pending rows; 0 when nothing is pending (never
  // negative, even when a hook host's clock wrote a created_at_ms ahead of the server).
  int64_t oldest_pending_age_ms = 0;
  // Rooms whose oldest pending row (the room's head, smallest id) has failed at least once
  // (retry_count > 0): rooms that per-room order holds behind a failing row.
  int64_t rooms_held_back = 0;
  // Rooms whose head was committed more than kRoomWaitingMs ago (server clock) and is still
  // pending: rooms falling behind, for whatever reason (a failing head, a hot room's backlog, IM
  // slow or refusing). Read over the rooms' heads, so its cost follows the rooms with pending rows.
  int64_t rooms_waiting = 0;
  // Rooms on the room schedule with pending rows (rows not listed yet are not counted).
  int64_t rooms_backlogged = 0;
};

// How long a room's head may wait before the room counts in OutboxStats::rooms_waiting.
inline constexpr int64_t kRoomWaitingMs = 5000;

class RelayStore {
 public:
  virtual ~RelayStore() = default;

  virtual core::Result<Claim> ClaimDue(const ClaimOptions& options) = 0;

  // Whether something is due now: with per-room order a room of the schedule, or a row not listed
  // yet; without it a pending row (next_attempt_at_ms <= server now). One non-locking read, no
  // transaction, nothing written. False means a ClaimDue now would claim nothing; true does not
  // promise it claims something (a due row may wait behind its room's head row in flight).
  virtual core::Result<bool> AnyDue(bool per_room_order) = 0;

  // A claim that fails with kAborted (deadlock or lock wait timeout) was rolled back as a whole
  // and may be repeated at once on the same store; the store already retried it a few times.

  // status='published', last_error=NULL, published_at_ms=server now for the rows still held by
  // `token`, and their rooms due now on the room schedule (each mark of this store brings its
  // rows' rooms back: MarkFailed at the retry time). `notes`: empty, or one per id, each row's
  // history entry (attempt_count + 1). Returns how many rows were marked (a row taken over by
  // another claim is not).
  virtual core::Result<size_t> MarkPublished(const std::string& token, std::span<const int64_t> ids,
                                             std::span<const AttemptNote> notes) = 0;

  // retry_count+1, last_error, next_attempt_at_ms = server now + retry_after_ms (and
  // drop_count+1 for a dropped attempt) for the rows still held by `token`; they stay pending.
  // A row of a higher id is never due after a row of a lower id with the same retry_after_ms
  // (the server's clock moves between statements): a failed pack's rows come due no later than
  // its first row, so the claim that takes that row can take the whole pack again.
  // Returns how many rows were marked.
  virtual core::Result<size_t> MarkFailed(const std::string& token,
                                          std::span<const FailedAttempt> attempts) = 0;

  // A failed attempt that sets its row aside (the park policy, [outbox_worker]
  // park_permanent_after), or an expired row ([tencent_im.max_age_by_type], attempted false):
  // status='parked', retry_count+1 (+0 when not attempted), last_error, parked_at_ms = server
  // now, for the rows still held by `token` and still pending (retry_after_ms is not used).
  // A parked row is never claimed again until an operator requeues it; its room's later rows
  // are claimed without it. Returns how many rows were parked.
  virtual core::Result<size_t> MarkParked(const std::string& token,
                                          std::span<const FailedAttempt> attempts) = 0;

  // Gives rows back unattempted: due at once (server now), retry_count unchanged, listed again (so
  // the next claim makes their rooms due). Returns the count.
  virtual core::Result<size_t> Release(const std::string& token, std::span<const int64_t> ids) = 0;

  virtual core::Result<OutboxStats> Stats() = 0;
};

}  // namespace room_outbox::relay
