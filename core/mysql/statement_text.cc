#include "core/mysql/statement_text.h"

#include <array>

#include "core/mysql/id_lists.h"

namespace room_outbox::core {
namespace {

constexpr std::array<size_t, 1> kFixedSizes = {0};

constexpr std::array<size_t, sql::kMaxRowsPerOutboxInsert> kRowCounts = [] {
  std::array<size_t, sql::kMaxRowsPerOutboxInsert> counts{};
  for (size_t i = 0; i < counts.size(); ++i) {
    counts[i] = i + 1;
  }
  return counts;
}();

const std::optional<sql::Fragments>& FragmentsOf(const sql::Statement& id, StatementSet set) {
  return set == StatementSet::kMariaDb ? id.mariadb : id.mysql;
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

bool InSet(const sql::Statement& id, StatementSet set) { return FragmentsOf(id, set).has_value(); }

std::span<const size_t> SizesOf(const sql::Statement& id) {
  switch (id.shape) {
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

std::string StatementText(StatementSet set, const sql::Statement& id, size_t n) {
  const auto& fragments = FragmentsOf(id, set);
  if (!fragments) {
    return "";
  }
  const auto& [prefix, part, suffix] = *fragments;
  switch (id.shape) {
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

std::string StatementName(const sql::Statement& id, size_t n) {
  if (id.shape == sql::Shape::kFixed) {
    return std::string(id.name);
  }
  return std::string(id.name) + "_" + std::to_string(n);
}

}  // namespace room_outbox::core
