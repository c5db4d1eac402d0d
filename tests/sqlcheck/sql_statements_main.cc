// sql-statements: prints every statement text the MySQL set can send, one JSON object per line
// ({"name": ..., "sql": ...}), for the grammar check (check.js): each statement of outbox_sql.h
// in every size the store uses (statement_text.h), each statement of every schema step
// (the text `outbox-relay migrate` embeds, split as it splits it), and room-sim's table and
// snapshot statement.
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "migrate/schema_steps.h"
#include "migrate/sql_split.h"
#include "room_snapshot_sql.h"
#include "support/each_statement.h"

namespace {

void Print(std::string_view name, std::string_view sql) {
  std::cout << nlohmann::json{{"name", name}, {"sql", sql}}.dump() << "\n";
}

void PrintFile(const std::string& name, const std::string& text) {
  int k = 0;
  for (const std::string& statement : room_outbox::relay::migrate::SplitSqlStatements(text)) {
    Print(name + " #" + std::to_string(++k), statement);
  }
}

}  // namespace

int main() {
  room_outbox::testing::ForEachStatementText(room_outbox::core::StatementSet::kMySql, Print);
  for (const auto& step : room_outbox::relay::migrate::SchemaSteps()) {
    PrintFile("schema/" + std::string(step.name) + ".sql", std::string(step.text));
  }
  std::ifstream in(std::string(ROOM_OUTBOX_SOURCE_DIR) + "/sim/room_snapshot.sql");
  std::stringstream snapshot;
  snapshot << in.rdbuf();
  if (!in) {
    std::cerr << "sql-statements: cannot read sim/room_snapshot.sql\n";
    return 1;
  }
  PrintFile("sim/room_snapshot.sql", snapshot.str());
  Print("room-sim: upsert room_snapshot", room_outbox::sim::kUpsertRoomSnapshot);
  return 0;
}
