// MariaDbOutboxStore, hook side: the commit transaction and the per-room order check.
#include <array>
#include <exception>
#include <optional>
#include <string>

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

    auto log = conn.Prepared("insert_command_log", sql::kInsertCommandLog);
    if (!log) {
      return fail(log.error());
    }
    const Command& command = request.command;
    const std::array<SqlValue, 7> log_params = {
        command.command_id, command.room_id, command.command_type, command.request_id,
        command.room_seq,   command.payload, request.now_ms};
    if (auto inserted = (*log)->Execute(log_params); !inserted) {
      if (inserted.error().code == ErrorCode::kAlreadyExists) {
        // uk_command_id is the only unique key a command log insert can hit: the command was
        // committed before, so nothing is written again.
        Abort(conn);
        return CommitWrite{.duplicate = true, .row_ids = {}};
      }
      return fail(inserted.error());
    }

    CommitWrite write;
    write.row_ids.reserve(request.rows.size());
    auto outbox = conn.Prepared("insert_outbox", sql::kInsertOutbox);
    if (!outbox) {
      return fail(outbox.error());
    }
    const SqlValue token = request.token.empty() ? SqlValue{} : SqlValue{request.token};
    for (const NewOutboxRow& row : request.rows) {
      const std::array<SqlValue, 10> params = {
          row.event_id, row.event_type,         row.room_id, row.command_id, row.request_id,
          row.envelope, request.lease_until_ms, token,       request.now_ms, request.now_ms};
      if (auto inserted = (*outbox)->Execute(params); !inserted) {
        return fail(inserted.error());
      }
      write.row_ids.push_back(static_cast<int64_t>((*outbox)->InsertId()));
    }

    if (caller_statements) {
      CallerTransaction tx(conn);
      Status status;
      try {
        status = caller_statements(tx);
      } catch (const std::exception& e) {
        return fail(
            Error{ErrorCode::kInternal, std::string("caller statements threw: ") + e.what()});
      } catch (...) {
        return fail(Error{ErrorCode::kInternal, "caller statements threw"});
      }
      if (!status.ok()) {
        return fail(status.error());
      }
      if (tx.failure()) {
        // The callback went on after a failed statement; the commit is still all or nothing.
        return fail(*tx.failure());
      }
    }

    if (auto committed = conn.Commit(); !committed) {
      // Lost during COMMIT the outcome is unknown; a retry with the same command_id reports
      // a duplicate if it did commit.
      return fail(committed.error());
    }
    return write;
  });
}

Result<bool> MariaDbOutboxStore::HasEarlierPending(const std::string& room_id, int64_t row_id) {
  return WithConnection([&](MariaDbConnection& conn) -> Result<bool> {
    auto stmt = conn.Prepared("has_earlier_pending", sql::kHasEarlierPending);
    if (!stmt) {
      return Fail(stmt.error());
    }
    const std::array<SqlValue, 2> params = {room_id, row_id};
    if (auto done = (*stmt)->Execute(params); !done) {
      return Fail(done.error());
    }
    auto rows = (*stmt)->FetchAll();
    if (!rows) {
      return Fail(rows.error());
    }
    return !rows->empty();
  });
}

}  // namespace room_outbox
