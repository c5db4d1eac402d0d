#include "core/mysql/statement_text.h"

#include <array>

#include "core/mysql/id_lists.h"

namespace room_outbox {
namespace {

constexpr std::array<size_t, 1> kFixedSizes = {0};

constexpr std::array<size_t, sql::kMaxRowsPerOutboxInsert> kRowCounts = [] {
  std::array<size_t, sql::kMaxRowsPerOutboxInsert> counts{};
  for (size_t i = 0; i < counts.size(); ++i) {
    counts[i] = i + 1;
  }
  return counts;
}();

const std::optional<sql::Fragments>& FragmentsOf(sql::Stmt id, StatementSet set) {
  const sql::Statement& entry = sql::StatementOf(id);
  return set == StatementSet::kMariaDb ? entry.mariadb : entry.mysql;
}

std::string Repeat(std::string_view part, size_t n, std::string_view separator) {
  std::string out;
  for (size_t i = 0; i < n; ++i) {
    if (i > 0) {
      out += separator;
    }
    out += part;
  }
  return out;
}

}  // namespace

bool InSet(sql::Stmt id, StatementSet set) { return FragmentsOf(id, set).has_value(); }

std::span<const size_t> SizesOf(sql::Stmt id) {
  switch (sql::StatementOf(id).shape) {
    case sql::Shape::kFixed:
      return kFixedSizes;
    case sql::Shape::kRows:
      return kRowCounts;
    case sql::Shape::kIdList:
    case sql::Shape::kUnionAll:
    case sql::Shape::kCaseList:
      return kListSizes;
  }
  return kFixedSizes;
}

std::string StatementText(StatementSet set, sql::Stmt id, size_t n) {
  const auto& fragments = FragmentsOf(id, set);
  if (!fragments) {
    return "";
  }
  const auto& [prefix, part, suffix] = *fragments;
  switch (sql::StatementOf(id).shape) {
    case sql::Shape::kFixed:
      return std::string(prefix);
    case sql::Shape::kIdList:
      return std::string(prefix) + Placeholders(n) + std::string(suffix);
    case sql::Shape::kUnionAll:
      return "(" + Repeat(part, n, ") UNION ALL (") + ")";
    case sql::Shape::kRows:
      return std::string(prefix) + Repeat(part, n, ", ") + std::string(suffix);
    case sql::Shape::kCaseList:
      return std::string(prefix) + Repeat(part, n, "") + std::string(suffix) + Placeholders(n);
  }
  return "";
}

std::string StatementName(sql::Stmt id, size_t n) {
  const sql::Statement& entry = sql::StatementOf(id);
  if (entry.shape == sql::Shape::kFixed) {
    return std::string(entry.name);
  }
  return std::string(entry.name) + "_" + std::to_string(n);
}

void ForEachStatementText(StatementSet set,
                          const std::function<void(std::string_view, std::string_view)>& visit) {
  for (const sql::Statement& entry : sql::kStatements) {
    if (!InSet(entry.id, set)) {
      continue;
    }
    for (size_t n : SizesOf(entry.id)) {
      visit(StatementName(entry.id, n), StatementText(set, entry.id, n));
    }
  }
}

}  // namespace room_outbox
