// MariaDbOutboxStore, hook side: the commit transaction and the lookup that resolves a commit
// whose answer was lost.
#include <array>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "mysql/mariadb_outbox_store.h"
#include "mysql/outbox_sql.h"

namespace room_outbox {
namespace {

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

// INSERT room_command_log. True when command_id was there already (nothing written).
Result<bool> InsertCommandLog(MariaDbConnection& conn, const Command& command) {
  auto log = conn.Prepared("insert_command_log", sql::kInsertCommandLog);
  if (!log) {
    return Fail(log.error());
  }
  const std::array<SqlValue, 6> params = {command.command_id,   command.room_id,
                                          command.command_type, command.request_id,
                                          command.room_seq,     command.payload};
  if (auto inserted = (*log)->Execute(params); !inserted) {
    // uk_command_id is the only unique key a command log insert can hit: the command was
    // committed before.
    if (inserted.error().code == ErrorCode::kAlreadyExists) {
      return true;
    }
    return Fail(inserted.error());
  }
  return false;
}

Result<void> RunCallerStatements(MariaDbConnection& conn, const CallerStatements& statements) {
  if (!statements) {
    return {};
  }
  CallerTransaction tx(conn);
  Status status;
  try {
    status = statements(tx);
  } catch (const std::exception& e) {
    return Fail(ErrorCode::kInternal, std::string("caller statements threw: ") + e.what());
  } catch (...) {
    return Fail(ErrorCode::kInternal, "caller statements threw");
  }
  if (!status.ok()) {
    return Fail(status.error());
  }
  if (tx.failure()) {
    // The callback went on after a failed statement; the commit is still all or nothing.
    return Fail(*tx.failure());
  }
  return {};
}

// The server's clock and, for per-room order, whether the room already has a pending row.
Result<void> CheckRoom(MariaDbConnection& conn, const CommitRequest& request, CommitWrite& write) {
  auto stmt = conn.Prepared("commit_check", sql::kCommitCheck);
  if (!stmt) {
    return Fail(stmt.error());
  }
  const std::array<SqlValue, 1> params = {request.command.room_id};
  if (auto done = (*stmt)->Execute(params); !done) {
    return done;
  }
  auto rows = (*stmt)->FetchAll();
  if (!rows) {
    return Fail(rows.error());
  }
  if (rows->size() != 1) {
    return Fail(ErrorCode::kInternal, "commit_check: expected one row");
  }
  auto now = (*rows)[0].Int(0);
  auto earlier = (*rows)[0].Int(1);
  if (!now || !earlier) {
    return Fail(!now ? now.error() : earlier.error());
  }
  write.server_now_ms = *now;
  write.earlier_pending = request.check_earlier_pending && *earlier != 0;
  return {};
}

// The outbox rows, in request order: pending rows leased to the sync publish, rows of types
// never sent already published.
Result<void> InsertRows(MariaDbConnection& conn, const CommitRequest& request, CommitWrite& write) {
  const SqlValue token = request.token.empty() ? SqlValue{} : SqlValue{request.token};
  const int64_t lease_ms = request.token.empty() ? 0 : request.sync_lease.count();
  write.row_ids.reserve(request.rows.size());
  for (const NewOutboxRow& row : request.rows) {
    auto stmt = row.published
                    ? conn.Prepared("insert_outbox_published", sql::kInsertOutboxPublished)
                    : conn.Prepared("insert_outbox_pending", sql::kInsertOutboxPending);
    if (!stmt) {
      return Fail(stmt.error());
    }
    std::vector<SqlValue> params = {row.event_id,   row.event_type, row.room_id,
                                    row.command_id, row.request_id, row.envelope};
    if (!row.published) {
      params.emplace_back(lease_ms);
      params.push_back(token);
    }
    if (auto inserted = (*stmt)->Execute(params); !inserted) {
      return inserted;
    }
    write.row_ids.push_back(static_cast<int64_t>((*stmt)->InsertId()));
  }
  return {};
}

}  // namespace

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
    auto duplicate = InsertCommandLog(conn, request.command);
    if (!duplicate) {
      return fail(duplicate.error());
    }
    if (*duplicate) {
      Abort(conn);
      CommitWrite write;
      write.outcome = CommitOutcome::kDuplicate;
      return write;
    }
    if (auto ran = RunCallerStatements(conn, caller_statements); !ran) {
      return fail(ran.error());
    }
    // The outbox rows go last, right before COMMIT, so their sync lease starts as late as it
    // can; the hook measures its publish deadline from lease_start.
    CommitWrite write;
    if (auto checked = CheckRoom(conn, request, write); !checked) {
      return fail(checked.error());
    }
    // After the check read the server's clock, before the insert starts the lease.
    write.lease_start = std::chrono::steady_clock::now();
    if (auto inserted = InsertRows(conn, request, write); !inserted) {
      return fail(inserted.error());
    }
    if (auto committed = conn.Commit(); !committed) {
      if (committed.error().code != ErrorCode::kUnavailable) {
        return fail(committed.error());  // the server answered: rolled back
      }
      // No answer: the outcome is unknown. The connection is useless now.
      drop_after_call_ = true;
      write.outcome = CommitOutcome::kCommitLost;
      write.commit_error = committed.error();
    }
    return write;
  });
}

Result<std::optional<FoundCommand>> MariaDbOutboxStore::FindCommand(const std::string& command_id) {
  using Found = std::optional<FoundCommand>;
  return WithConnection([&](MariaDbConnection& conn) -> Result<Found> {
    return InTransaction(conn, [&]() -> Result<Found> {
      auto ids = [&](const char* name, std::string_view text) -> Result<std::vector<int64_t>> {
        auto stmt = conn.Prepared(name, text);
        if (!stmt) {
          return Fail(stmt.error());
        }
        const std::array<SqlValue, 1> params = {command_id};
        if (auto done = (*stmt)->Execute(params); !done) {
          return Fail(done.error());
        }
        auto rows = (*stmt)->FetchAll();
        if (!rows) {
          return Fail(rows.error());
        }
        std::vector<int64_t> out;
        for (const ResultRow& row : *rows) {
          auto id = row.Int(0);
          if (!id) {
            return Fail(id.error());
          }
          out.push_back(*id);
        }
        return out;
      };
      auto log = ids("find_command", sql::kFindCommand);
      if (!log) {
        return Fail(log.error());
      }
      if (log->empty()) {
        return Found{};
      }
      auto rows = ids("command_rows", sql::kCommandRows);
      if (!rows) {
        return Fail(rows.error());
      }
      return Found{FoundCommand{std::move(*rows)}};
    });
  });
}

}  // namespace room_outbox
