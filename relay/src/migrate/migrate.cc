#include "migrate/migrate.h"

#include <mysqld_error.h>

#include <algorithm>
#include <string>

#include "core/mysql/outbox_sql.h"
#include "migrate/sql_split.h"

namespace room_outbox::relay::migrate {
namespace {

// An ALTER whose work is done: the column or index it adds is there, the one it drops is gone.
bool AlreadyApplied(unsigned err) {
  return err == ER_DUP_FIELDNAME || err == ER_DUP_KEYNAME || err == ER_CANT_DROP_FIELD_OR_KEY;
}

constexpr const char* kRunMigrate =
    "run `outbox-relay migrate` (`outbox-relay migrate --dry-run` lists the steps)";

// Whether the version table exists, asked through information_schema: the probe itself never
// fails on a database without it.
core::Result<bool> HasVersionTable(core::MariaDbConnection& conn) {
  auto rows = conn.QueryText("schema_version_table", core::sql::kSchemaVersionTable);
  if (!rows) {
    return core::Fail(rows.error());
  }
  if (rows->size() != 1 || rows->front().empty() || !rows->front()[0]) {
    return core::Fail(ErrorCode::kInternal, "schema_version_table: expected one count");
  }
  return *rows->front()[0] != "0";
}

}  // namespace

core::Result<SchemaState> ReadSchemaState(core::MariaDbConnection& conn) {
  SchemaState state;
  auto exists = HasVersionTable(conn);
  if (!exists) {
    return core::Fail(exists.error());
  }
  if (!*exists) {
    return state;
  }
  auto rows = conn.QueryText("schema_versions", core::sql::kSchemaVersions);
  if (!rows) {
    return core::Fail(rows.error());
  }
  state.has_version_table = true;
  for (const core::MariaDbConnection::TextRow& row : *rows) {
    if (row.empty() || !row[0]) {
      return core::Fail(ErrorCode::kInternal, "schema_versions: a row without a version");
    }
    state.recorded.push_back(std::stoll(*row[0]));
  }
  std::sort(state.recorded.begin(), state.recorded.end());
  return state;
}

core::Result<std::vector<SchemaStep>> PendingSteps(const SchemaState& state) {
  const auto steps = SchemaSteps();
  const int64_t latest = steps.back().version;
  if (state.current() > latest) {
    return core::Fail(ErrorCode::kInvalidArgument,
                      "the database's schema is version " + std::to_string(state.current()) +
                          ", newer than this outbox-relay knows (" + std::to_string(latest) +
                          "): use the outbox-relay that migrated it");
  }
  std::vector<SchemaStep> pending;
  for (const SchemaStep& step : steps) {
    if (!std::binary_search(state.recorded.begin(), state.recorded.end(), step.version)) {
      pending.push_back(step);
    }
  }
  return pending;
}

core::Result<AppliedStep> ApplyStep(core::MariaDbConnection& conn, const SchemaStep& step) {
  AppliedStep applied{.version = step.version, .name = std::string(step.name)};
  for (const std::string& statement : SplitSqlStatements(step.text)) {
    ++applied.statements;
    auto done = conn.QueryText(step.name, statement);
    if (done) {
      continue;
    }
    if (AlreadyApplied(conn.LastErrno())) {
      ++applied.already_applied;
      continue;
    }
    return core::Fail(done.error().code, "schema step " + std::string(step.name) + ", statement " +
                                             std::to_string(applied.statements) + " (" +
                                             statement.substr(0, 80) +
                                             "): " + done.error().message);
  }
  return applied;
}

core::Result<std::vector<AppliedStep>> MigrateToLatest(core::MariaDbConnection& conn) {
  auto state = ReadSchemaState(conn);
  if (!state) {
    return core::Fail(state.error());
  }
  auto pending = PendingSteps(*state);
  if (!pending) {
    return core::Fail(pending.error());
  }
  std::vector<AppliedStep> applied;
  for (const SchemaStep& step : *pending) {
    auto done = ApplyStep(conn, step);
    if (!done) {
      return core::Fail(done.error());
    }
    applied.push_back(std::move(*done));
  }
  return applied;
}

std::string SchemaVerdict::Explain() const {
  if (!too_old()) {
    return "";
  }
  if (!has_version_table) {
    return "the database has no room_outbox_schema_version table (its schema was never migrated, "
           "or was applied by hand before that table existed); this outbox-relay needs "
           "schema version " +
           std::to_string(kRequiredSchemaVersion) + ": " + kRunMigrate +
           "; it recognises what is there already";
  }
  return "the database's schema is version " + std::to_string(found) + ", older than the " +
         std::to_string(kRequiredSchemaVersion) + " this outbox-relay needs: " + kRunMigrate;
}

core::Result<SchemaVerdict> JudgeSchema(core::MariaDbConnection& conn) {
  auto state = ReadSchemaState(conn);
  if (!state) {
    return core::Fail(state.error());
  }
  return SchemaVerdict{.has_version_table = state->has_version_table, .found = state->current()};
}

core::Result<SchemaVerdict> JudgeSchema(const MysqlOptions& options) {
  auto conn = core::MariaDbConnection::Connect(options);
  if (!conn) {
    return core::Fail(conn.error());
  }
  return JudgeSchema(**conn);
}

core::Result<void> CheckSchemaVersion(core::MariaDbConnection& conn) {
  auto verdict = JudgeSchema(conn);
  if (!verdict) {
    return core::Fail(verdict.error());
  }
  if (verdict->too_old()) {
    return core::Fail(ErrorCode::kInvalidArgument, verdict->Explain());
  }
  return {};
}

core::Result<void> CheckSchemaVersion(const MysqlOptions& options) {
  auto conn = core::MariaDbConnection::Connect(options);
  if (!conn) {
    return core::Fail(conn.error());
  }
  return CheckSchemaVersion(**conn);
}

}  // namespace room_outbox::relay::migrate
