// MariaDbRelayStore: the factory, AnyDue and Stats. The claim is in mariadb_claim.cc, the result
// writes in relay_marks.cc.
#include "store/mariadb_relay_store.h"

#include "core/mysql/outbox_sql.h"

namespace room_outbox::relay {

namespace {

// Runs `statement` (no parameters) and returns its one result row.
core::Result<core::ResultRow> OneRow(core::MariaDbConnection& conn,
                                     const core::sql::Statement& statement) {
  auto stmt = conn.Prepared(statement);
  if (!stmt) {
    return core::Fail(stmt.error());
  }
  if (auto done = (*stmt)->Execute({}); !done) {
    return core::Fail(done.error());
  }
  auto rows = (*stmt)->FetchAll();
  if (!rows) {
    return core::Fail(rows.error());
  }
  if (rows->size() != 1) {
    return core::Fail(
        ErrorCode::kInternal,
        std::string(statement.name) + ": expected one row, got " + std::to_string(rows->size()));
  }
  return std::move((*rows)[0]);
}

}  // namespace

std::unique_ptr<MariaDbRelayStore> MakeMariaDbRelayStore(const MysqlOptions& options) {
  return std::make_unique<MariaDbRelayStore>(options);
}

core::Result<bool> MariaDbRelayStore::AnyDue() {
  return session_.WithConnection([&](core::MariaDbConnection& conn) -> core::Result<bool> {
    auto row = OneRow(conn, core::sql::Stmt::kAnyDue);
    if (!row) {
      return core::Fail(row.error());
    }
    auto due = row->Int(0);
    if (!due) {
      return core::Fail(due.error());
    }
    return *due != 0;
  });
}

core::Result<OutboxStats> MariaDbRelayStore::Stats() {
  return session_.WithConnection([&](core::MariaDbConnection& conn) -> core::Result<OutboxStats> {
    auto row = OneRow(conn, core::sql::Stmt::kStats);
    if (!row) {
      return core::Fail(row.error());
    }
    auto pending = row->Int(0);
    auto age = row->Int(1);
    auto held_back = row->Int(2);
    if (!pending || !age || !held_back) {
      return core::Fail(!pending ? pending.error() : !age ? age.error() : held_back.error());
    }
    return OutboxStats{
        .pending = *pending, .oldest_pending_age_ms = *age, .rooms_held_back = *held_back};
  });
}

}  // namespace room_outbox::relay
