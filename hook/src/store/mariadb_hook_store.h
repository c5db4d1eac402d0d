// MariaDbHookStore: the HookStore over one MariaDB connection (see hook_store.h for the contract
// of each call; StoreSession for the connection policy).
//
// The commit runs BEGIN; the command log INSERT, which also reads the server's clock and the
// per-room order check; the caller's statements; the outbox rows in one multi-row INSERT per 16
// rows (outbox_insert.h), which hands back their ids; COMMIT. For a command of up to 16 events
// and no caller statement that is four round trips, the minimum for a transaction of two
// inserts. The MySQL set (no RETURNING) writes the same rows with plain INSERTs; when they are
// leased to a sync publish, which needs their ids, it adds one SELECT before COMMIT that reads the
// clock, the check and the ids (five round trips); rows for the relay alone need none of them, so
// that commit is four round trips as in the MariaDB set. Every statement that carries a value is a
// server-side prepared statement, prepared once per connection; their texts are in
// core/mysql/outbox_sql.h.
//
// Thread-safety: none; one store per thread.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "core/mysql/store_session.h"
#include "room_outbox/options.h"
#include "store/hook_store.h"

namespace room_outbox::internal {

// What the store prepares at connect: the statements of its calls (a composed statement at its
// smallest size). A statement outside the connection's set is skipped.
inline constexpr const core::sql::Statement* kHookStatements[] = {
    &core::sql::Stmt::kInsertCommandLog,
    &core::sql::Stmt::kInsertCommandLogChecked,
    &core::sql::Stmt::kInsertOutbox,
    &core::sql::Stmt::kCommitReadBack,
    &core::sql::Stmt::kCommitReadBackChecked,
    &core::sql::Stmt::kFindCommand,
    &core::sql::Stmt::kServerReadOnly,
    &core::sql::Stmt::kCommandRows,
    &core::sql::Stmt::kMarkPublished,
    &core::sql::Stmt::kRelease,
    &core::sql::Stmt::kRecordPackSize,
};

class MariaDbHookStore final : public HookStore {
 public:
  // On a SystemClock of its own.
  explicit MariaDbHookStore(const MysqlOptions& options) : session_(options, kHookStatements) {}
  // On `clock` (CommitWrite::lease_start_ms, the idle ping), which must outlive the store.
  MariaDbHookStore(const MysqlOptions& options, core::Clock& clock)
      : session_(options, kHookStatements, clock) {}

  // Connects now unless connected (StoreSession::Connect).
  [[nodiscard]] core::Result<void> Connect() { return session_.Connect(); }
  // The server's id of the current connection; 0 when not connected.
  bool connected() const { return session_.connected(); }
  uint64_t connection_id() const { return session_.connection_id(); }

  [[nodiscard]] core::Result<CommitWrite> CommitCommand(
      const CommitRequest& request, const CallerStatements& caller_statements) override;
  [[nodiscard]] core::Result<std::optional<FoundCommand>> FindCommand(
      const std::string& command_id) override;
  [[nodiscard]] core::Result<bool> ServerReadOnly() override;
  [[nodiscard]] core::Result<size_t> MarkPublished(const std::string& token,
                                                   std::span<const int64_t> ids) override {
    return session_.MarkPublished(token, ids);
  }
  [[nodiscard]] core::Result<size_t> Release(const std::string& token,
                                             std::span<const int64_t> ids) override {
    return session_.Release(token, ids);
  }
  [[nodiscard]] core::Result<size_t> RecordPackSize(const std::string& token, int64_t first_row_id,
                                                    size_t events) override;

 private:
  core::StoreSession session_;
};

// A store that connects on its first call (or on Connect()), on a SystemClock of its own.
[[nodiscard]] std::unique_ptr<MariaDbHookStore> MakeMariaDbHookStore(const MysqlOptions& options);
// The same on `clock`, which must outlive the store.
[[nodiscard]] std::unique_ptr<MariaDbHookStore> MakeMariaDbHookStore(const MysqlOptions& options,
                                                                     core::Clock& clock);

}  // namespace room_outbox::internal
