#include "store/mariadb_hook_store.h"

#include <array>
#include <cstdint>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "caller_statement_check.h"
#include "core/mysql/mysql_error.h"
#include "core/mysql/outbox_sql.h"
#include "counting_transaction.h"
#include "store/outbox_insert.h"

namespace room_outbox::internal {
namespace {

// Collects the first failure of the caller's statements: once one failed the transaction is
// doomed, whatever the callback returns.
class CallerTransaction final : public CountingTransaction {
 public:
  explicit CallerTransaction(core::MariaDbConnection& conn) : conn_(conn) {}

  Status Execute(std::string_view sql, const std::vector<SqlValue>& params) override {
    return ExecuteCounted(sql, params, nullptr);
  }

  Status ExecuteCounted(std::string_view sql, const std::vector<SqlValue>& params,
                        uint64_t* affected_rows) override {
    if (affected_rows != nullptr) {
      *affected_rows = 0;
    }
    if (failure_) {
      return *failure_;
    }
    if (auto refused = RefusedCallerStatement(sql)) {
      return Record(Error{ErrorCode::kInvalidArgument,
                          "caller statement refused: " + *refused +
                              "; the statements callback runs inside the commit's transaction, "
                              "before the outbox rows"});
    }
    auto stmt = conn_.PreparedCallerStatement(sql);
    if (!stmt) {
      return Record(stmt.error());
    }
    if (auto done = (*stmt)->Execute(params); !done) {
      return Record(done.error());
    }
    // A caller's SELECT is allowed; its rows are read and dropped (and counted).
    auto rows = (*stmt)->FetchAll();
    if (!rows) {
      return Record(rows.error());
    }
    if (affected_rows != nullptr) {
      // The connection uses CLIENT_FOUND_ROWS: an UPDATE counts the rows it matched.
      *affected_rows = rows->empty() ? (*stmt)->AffectedRows() : rows->size();
    }
    return Status();
  }

  const std::optional<Error>& failure() const { return failure_; }

 private:
  Status Record(Error error) {
    failure_ = error;
    return error;
  }

  core::MariaDbConnection& conn_;
  std::optional<Error> failure_;
};

// What the command log insert found.
struct LoggedCommand {
  bool duplicate = false;  // command_id was there already: nothing was written
  int64_t server_now_ms = 0;
  bool earlier_pending = false;
};

// Whether the commit looks for an earlier pending row of the room: only the holder of a lease
// publishes out of the relay's order (hook_store.h).
bool ChecksEarlierPending(const CommitRequest& request) {
  return request.check_earlier_pending && !request.token.empty();
}

// The RETURNING row of the MariaDB set's command log insert: the server's clock and, when
// `check`, the per-room order check.
core::Result<LoggedCommand> ReadLogged(core::PreparedStatement& log, bool check) {
  auto row = log.Next();
  if (!row || !*row) {
    return core::Fail(
        !row ? row.error()
             : Error{ErrorCode::kInternal, "insert_command_log: RETURNING gave no row"});
  }
  auto now = log.IntAt(0);
  auto earlier = check ? log.IntAt(1) : core::Result<int64_t>(0);
  if (!now || !earlier) {
    return core::Fail(!now ? now.error() : earlier.error());
  }
  if (auto end = log.Next(); !end || *end) {
    return core::Fail(
        !end ? end.error()
             : Error{ErrorCode::kInternal, "insert_command_log: RETURNING gave two rows"});
  }
  return LoggedCommand{.server_now_ms = *now, .earlier_pending = *earlier != 0};
}

// INSERT room_command_log. In the MariaDB set it also reads the server's clock and, when asked,
// the per-room order check (outbox_sql.h: kInsertCommandLogChecked); the MySQL set reads them
// after the outbox rows (ReadBackCommit).
core::Result<LoggedCommand> InsertCommandLog(core::MariaDbConnection& conn,
                                             const CommitRequest& request) {
  const bool returning = conn.dialect().returning;
  const bool check = returning && ChecksEarlierPending(request);
  auto log = conn.Prepared(check ? core::sql::Stmt::kInsertCommandLogChecked
                                 : core::sql::Stmt::kInsertCommandLog);
  if (!log) {
    return core::Fail(log.error());
  }
  const Command& command = request.command;
  const std::array<core::SqlRef, 7> params = {
      command.command_id, command.room_id, command.command_type, command.request_id,
      command.room_seq,   command.payload, command.room_id};
  const std::span<const core::SqlRef> bound = std::span(params).first(check ? 7 : 6);
  if (auto inserted = (*log)->ExecuteRefs(bound); !inserted) {
    // uk_command_id is the only unique key a command log insert can hit: the command was
    // committed before.
    if (inserted.error().code == ErrorCode::kAlreadyExists) {
      return LoggedCommand{.duplicate = true};
    }
    return core::Fail(inserted.error());
  }
  return returning ? ReadLogged(**log, check) : LoggedCommand{};
}

core::Result<void> RunCallerStatements(core::MariaDbConnection& conn,
                                       const CallerStatements& statements) {
  if (!statements) {
    return {};
  }
  CallerTransaction tx(conn);
  Status status;
  try {
    status = statements(tx);
  } catch (const std::exception& e) {
    return core::Fail(ErrorCode::kInternal, std::string("caller statements threw: ") + e.what());
  } catch (...) {
    return core::Fail(ErrorCode::kInternal, "caller statements threw");
  }
  if (!status.ok()) {
    return core::Fail(status.error());
  }
  if (tx.failure()) {
    // The callback went on after a failed statement; the commit is still all or nothing.
    return core::Fail(*tx.failure());
  }
  if (!conn.InTransaction()) {
    // A statement the check let through (a procedure that commits) ended the transaction: the
    // command log row may be committed without its events. Writing the rows now would not be
    // the one transaction the commit promises; the caller is told, and a retry with the same
    // command_id is told the same (CheckDuplicateHasEvents), never Duplicate.
    return core::Fail(ErrorCode::kInternal,
                      "the statements callback ended the commit's transaction (a statement that "
                      "commits, e.g. a procedure running COMMIT): the command log row may be "
                      "committed without its events; none were written");
  }
  return {};
}

// A duplicate command_id whose command has no outbox row although this commit carries events:
// an earlier commit's statements callback ended its transaction after the command log row
// (RunCallerStatements). Reporting Duplicate would lose the events for good.
core::Result<void> CheckDuplicateHasEvents(core::MariaDbConnection& conn,
                                           const CommitRequest& request) {
  if (request.rows.empty()) return {};
  auto stmt = conn.Prepared(core::sql::Stmt::kCommandRows);
  if (!stmt) return core::Fail(stmt.error());
  const std::array<SqlValue, 1> params = {request.command.command_id};
  if (auto done = (*stmt)->Execute(params); !done) return core::Fail(done.error());
  auto rows = (*stmt)->FetchAll();
  if (!rows) return core::Fail(rows.error());
  if (!rows->empty()) return {};
  return core::Fail(ErrorCode::kInternal,
                    "command_id " + request.command.command_id +
                        " is in room_command_log without outbox rows: an earlier commit's "
                        "statements callback ended its transaction, so its events were never "
                        "written (or its published events were purged since); not a duplicate. "
                        "Commit the events under a new command_id");
}

// Whether the commit reads its rows back after inserting them: in the MySQL set (no RETURNING),
// when they are leased, since the sync publish sends and marks them by id; rows for the relay
// alone need neither their ids nor the clock nor the per-room check (hook_store.h, CommitWrite).
bool ReadsBack(const core::MariaDbConnection& conn, const CommitRequest& request) {
  return !conn.dialect().returning && !request.token.empty();
}

// Everything of the commit between BEGIN and COMMIT: the command log row, the caller's
// statements, the outbox rows and, in the MySQL set with leased rows, the read-back. `write` gets
// what the transaction wrote and saw (outcome kDuplicate: nothing was written).
core::Result<void> WriteCommand(core::MariaDbConnection& conn, const CommitRequest& request,
                                const CallerStatements& caller_statements, core::Clock& clock,
                                CommitWrite& write) {
  auto logged = InsertCommandLog(conn, request);
  if (!logged) {
    return core::Fail(logged.error());
  }
  if (logged->duplicate) {
    if (auto whole = CheckDuplicateHasEvents(conn, request); !whole) return whole;
    write.outcome = CommitOutcome::kDuplicate;
    return {};
  }
  write.server_now_ms = logged->server_now_ms;
  write.earlier_pending = logged->earlier_pending;
  if (auto ran = RunCallerStatements(conn, caller_statements); !ran) {
    return ran;
  }
  // The outbox rows go last, right before COMMIT, so their sync lease starts as late as it
  // can; the hook measures its publish deadline from lease_start_ms, taken after the server's
  // clock was read (the command log insert's, in both sets) and before the insert starts the
  // lease.
  write.lease_start_ms = clock.SteadyMs();
  const int64_t lease_ms = request.token.empty() ? 0 : request.sync_lease.count();
  if (auto inserted = InsertOutboxRows(conn, request.rows, request.token, lease_ms, write.row_ids);
      !inserted) {
    return inserted;
  }
  if (!ReadsBack(conn, request)) {
    return {};
  }
  return ReadBackCommit(conn, request.command, request.rows, ChecksEarlierPending(request), write);
}

}  // namespace

core::Result<CommitWrite> MariaDbHookStore::CommitCommand(
    const CommitRequest& request, const CallerStatements& caller_statements) {
  return session_.WithConnection([&](core::MariaDbConnection& conn) -> core::Result<CommitWrite> {
    if (auto begun = conn.Begin(); !begun) {
      return core::Fail(begun.error());
    }
    CommitWrite write;
    if (auto written = WriteCommand(conn, request, caller_statements, session_.clock(), write);
        !written) {
      session_.Abort(conn);
      return core::Fail(written.error());
    }
    if (write.outcome == CommitOutcome::kDuplicate) {
      session_.Abort(conn);
      return write;
    }
    if (auto committed = conn.Commit(); !committed) {
      if (committed.error().code != ErrorCode::kUnavailable ||
          core::IsReadOnlyRefusal(committed.error())) {
        // The server answered: rolled back (a cluster's certification conflict is a 1213 here,
        // kAborted; a server turned read-only under the transaction refuses its COMMIT: nothing
        // was committed either way).
        session_.Abort(conn);
        return core::Fail(committed.error());
      }
      // No answer: the outcome is unknown. The connection is useless now.
      session_.DropAfterCall();
      write.outcome = CommitOutcome::kCommitLost;
      write.commit_error = committed.error();
    }
    return write;
  });
}

core::Result<std::optional<FoundCommand>> MariaDbHookStore::FindCommand(
    const std::string& command_id) {
  using Found = std::optional<FoundCommand>;
  return session_.WithConnection([&](core::MariaDbConnection& conn) -> core::Result<Found> {
    return session_.InTransaction(conn, [&]() -> core::Result<Found> {
      auto ids = [&](const core::sql::Statement& id) -> core::Result<std::vector<int64_t>> {
        auto stmt = conn.Prepared(id);
        if (!stmt) {
          return core::Fail(stmt.error());
        }
        const std::array<SqlValue, 1> params = {command_id};
        if (auto done = (*stmt)->Execute(params); !done) {
          return core::Fail(done.error());
        }
        auto rows = (*stmt)->FetchAll();
        if (!rows) {
          return core::Fail(rows.error());
        }
        std::vector<int64_t> out;
        for (const core::ResultRow& row : *rows) {
          auto id = row.Int(0);
          if (!id) {
            return core::Fail(id.error());
          }
          out.push_back(*id);
        }
        return out;
      };
      auto log = ids(core::sql::Stmt::kFindCommand);
      if (!log) {
        return core::Fail(log.error());
      }
      if (log->empty()) {
        return Found{};
      }
      auto rows = ids(core::sql::Stmt::kCommandRows);
      if (!rows) {
        return core::Fail(rows.error());
      }
      return Found{FoundCommand{std::move(*rows)}};
    });
  });
}

core::Result<bool> MariaDbHookStore::ServerReadOnly() {
  return session_.WithConnection([&](core::MariaDbConnection& conn) -> core::Result<bool> {
    auto row = conn.QueryOneRow(core::sql::Stmt::kServerReadOnly);
    if (!row) {
      return core::Fail(row.error());
    }
    auto read_only = row->Int(0);
    if (!read_only) {
      return core::Fail(read_only.error());
    }
    return *read_only != 0;
  });
}

core::Result<size_t> MariaDbHookStore::RecordPackSize(const std::string& token,
                                                      int64_t first_row_id, size_t events) {
  return session_.WithConnection([&](core::MariaDbConnection& conn) -> core::Result<size_t> {
    auto stmt = conn.Prepared(core::sql::Stmt::kRecordPackSize);
    if (!stmt) {
      return core::Fail(stmt.error());
    }
    const std::array<SqlValue, 3> params = {static_cast<int64_t>(events), first_row_id, token};
    if (auto done = (*stmt)->Execute(params); !done) {
      return core::Fail(done.error());
    }
    return static_cast<size_t>((*stmt)->AffectedRows());
  });
}

std::unique_ptr<MariaDbHookStore> MakeMariaDbHookStore(const MysqlOptions& options) {
  return std::make_unique<MariaDbHookStore>(options);
}

std::unique_ptr<MariaDbHookStore> MakeMariaDbHookStore(const MysqlOptions& options,
                                                       core::Clock& clock) {
  return std::make_unique<MariaDbHookStore>(options, clock);
}

}  // namespace room_outbox::internal
