// HookStore: the database operations of the hook's commit path and sync publish, behind one
// seam. The MariaDB implementation is MariaDbHookStore (store/mariadb_hook_store.h); unit tests
// use MockHookStore (tests/mocks/mock_hook_store.h). The relay has a store of its own
// (relay/src/store/relay_store.h); both write the same rows (docs/sql-contract.md).
//
// One clock: every absolute time the commit stores (created_at_ms, the sync lease,
// published_at_ms) is the database server's, read in the statements themselves; the hook passes
// durations only.
//
// Thread-safety: a HookStore owns one connection; use it from one thread at a time.
// Connection loss: the call fails with kUnavailable and the next call reconnects.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/result.h"
#include "room_outbox/hook.h"

namespace room_outbox::internal {

// A new outbox row written by the hook.
struct NewOutboxRow {
  std::string event_id;
  std::string event_type;
  std::string room_id;
  std::string command_id;
  std::string request_id;
  std::string envelope;  // JSON text
  // A type never sent to IM (skip_event_types): written 'published' (published_at_ms set, no
  // claim token) in the commit itself, so it is never pending and takes no part in room order.
  bool published = false;
};

struct CommitRequest {
  Command command;
  std::vector<NewOutboxRow> rows;
  // The pending rows are written leased to `token` for `sync_lease` (sync_publish_timeout and a
  // margin, SyncLeaseMs), counted on the database server's clock from their insert. An empty
  // token or a zero lease leaves them due at once. Every absolute time of the commit is the
  // server's.
  std::string token;
  std::chrono::milliseconds sync_lease{0};
  // Per-room order: look, inside the transaction, for an earlier pending row of the room (the
  // MariaDB set looks with the command log insert, before this command's rows exist; the MySQL
  // set with its read-back after the outbox insert, for a pending row below this command's first
  // id). Only when the rows are written leased (a token): the answer tells the lease holder (the
  // sync publish) whether it may send ahead of the relay. Unleased rows go to the relay, which
  // keeps each room's order itself, so the answer would go unused (earlier_pending is then
  // false). The check costs the commit a secondary-index read.
  bool check_earlier_pending = true;
};

// How a CommitCommand that did not fail outright ended.
enum class CommitOutcome {
  kCommitted,  // durable
  kDuplicate,  // command_id was committed before: nothing was written
  // COMMIT was sent and its answer was lost (connection-class error): it may have committed.
  // row_ids, earlier_pending and lease_start_ms hold what the transaction wrote and saw;
  // commit_error says what happened. Resolve it with FindCommand.
  kCommitLost,
};

struct CommitWrite {
  CommitOutcome outcome = CommitOutcome::kCommitted;
  // Ids of the inserted outbox rows, in request order, when they were written leased (a token):
  // what the sync publish sends and marks by. Rows written unleased are the relay's alone and
  // nobody here reads their ids: the MySQL set reads nothing back for them and leaves this empty
  // (the MariaDB set's RETURNING fills it anyway).
  std::vector<int64_t> row_ids;
  // The room had a pending row before this command's (read in the transaction; false when
  // not asked for or the rows were written unleased).
  bool earlier_pending = false;
  // The database server's clock (epoch ms), read in the transaction before lease_start_ms, so
  // server_now_ms + (time since lease_start_ms) never runs ahead of the server. 0 when the MySQL
  // set wrote the rows unleased (it read nothing back).
  int64_t server_now_ms = 0;
  // The store clock's monotonic milliseconds (Clock::SteadyMs), read just before the outbox
  // insert: the sync lease cannot have started earlier, so a deadline measured from here on the
  // same clock ends before the lease does.
  int64_t lease_start_ms = 0;
  Error commit_error;  // kCommitLost only
};

// A command found in room_command_log.
struct FoundCommand {
  std::vector<int64_t> row_ids;  // its outbox rows, ordered by id (= the commit's order)
};

class HookStore {
 public:
  virtual ~HookStore() = default;

  // In one transaction: the command log row (its insert takes the server's clock),
  // caller_statements, then the outbox rows (the last writes before COMMIT; when they are leased,
  // the MySQL set then reads the rows' ids, the clock and the earlier-pending check back in one
  // SELECT). A failure before COMMIT was sent rolls back and is returned (nothing was written:
  // with kUnavailable the connection is gone and the server rolled the transaction back), and so
  // is a COMMIT the server answered with an error (a read-only refusal included: kUnavailable). A
  // duplicate command_id is not an error (kDuplicate); neither is a COMMIT whose answer was lost
  // (kCommitLost).
  virtual core::Result<CommitWrite> CommitCommand(const CommitRequest& request,
                                                  const CallerStatements& caller_statements) = 0;

  // Looks command_id up in room_command_log with a locking read, so a transaction of that
  // command still in flight on the server is waited for (bounded by the lock wait timeout).
  // nullopt: not committed. An error: the lookup could not be made.
  virtual core::Result<std::optional<FoundCommand>> FindCommand(const std::string& command_id) = 0;

  // Whether the server of the store's connection is read-only (a replica, or a primary demoted
  // in a failover): a command FindCommand did not find there may not have reached it yet.
  virtual core::Result<bool> ServerReadOnly() = 0;

  // status='published', last_error=NULL, published_at_ms=server now for the rows still held by
  // `token` (the sync lease). Returns how many rows were marked (a row whose lease ran out and
  // that a relay took over is not).
  virtual core::Result<size_t> MarkPublished(const std::string& token,
                                             std::span<const int64_t> ids) = 0;

  // Gives rows back unattempted: due at once (server now), retry_count unchanged. Returns the
  // count.
  virtual core::Result<size_t> Release(const std::string& token, std::span<const int64_t> ids) = 0;

  // room_outbox.pack_size = `events` on the row `first_row_id` while `token` still holds it: the
  // first row of a pack whose send failed without a definite drop (schema 007). Returns the count
  // (0 or 1).
  virtual core::Result<size_t> RecordPackSize(const std::string& token, int64_t first_row_id,
                                              size_t events) = 0;
};

}  // namespace room_outbox::internal
