#include "migrate/migrate_command.h"

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "config/exit_codes.h"
#include "migrate/migrate.h"
#include "migrate/sql_split.h"

namespace room_outbox::relay::migrate {
namespace {

using json = nlohmann::ordered_json;

int Failure(std::ostream& out, std::ostream& err, const Error& error) {
  out << json{{"error", error.message}, {"code", ErrorCodeName(error.code)}}.dump() << "\n";
  err << "outbox-relay migrate: " << error.message << "\n";
  return error.code == ErrorCode::kInvalidArgument ? kExitUsage : kExitRuntimeFailure;
}

json DryRunStep(const SchemaStep& step) {
  json sql = json::array();
  for (const std::string& statement : SplitSqlStatements(step.text)) {
    sql.push_back(statement);
  }
  return json{{"version", step.version}, {"name", step.name}, {"sql", std::move(sql)}};
}

}  // namespace

int RunMigrateCommand(const MigrateCli& cli, std::ostream& out, std::ostream& err) {
  auto config = LoadConfig(cli.config_path, core::SecretUse::kDatabaseOnly);
  if (!config) {
    err << "outbox-relay migrate: " << config.error().message << "\n";
    return kExitUsage;
  }
  auto conn = core::MariaDbConnection::Connect(config->mysql);
  if (!conn) {
    return Failure(out, err, conn.error());
  }
  auto state = ReadSchemaState(**conn);
  auto pending = state ? PendingSteps(*state)
                       : core::Result<std::vector<SchemaStep>>(core::Fail(state.error()));
  if (!pending) {
    return Failure(out, err, pending.error());
  }
  const core::Dialect& dialect = (*conn)->dialect();
  json report = {{"server", core::ServerVersionText(dialect.server)},
                 {"dialect", core::StatementSetName(dialect.statements)},
                 {"from_version", state->has_version_table ? json(state->current()) : json()},
                 {"to_version", SchemaSteps().back().version},
                 {"dry_run", cli.dry_run},
                 {"steps", json::array()}};
  for (const SchemaStep& step : *pending) {
    if (cli.dry_run) {
      report["steps"].push_back(DryRunStep(step));
      continue;
    }
    auto applied = ApplyStep(**conn, step);
    if (!applied) {
      return Failure(out, err, Error{ErrorCode::kInternal, applied.error().message});
    }
    report["steps"].push_back({{"version", applied->version},
                               {"name", applied->name},
                               {"statements", applied->statements},
                               {"already_applied", applied->already_applied}});
  }
  out << report.dump() << "\n";
  return kExitOk;
}

}  // namespace room_outbox::relay::migrate
