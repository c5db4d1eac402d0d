// outbox_sql.h's entries and the statements composed from them (statement_text.h): every set sends
// complete statements in each of its sizes, the MySQL set never says RETURNING, the sets differ
// only where they must, and the composed shapes are those the stores send.
#include "core/mysql/statement_text.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "core/mysql/id_lists.h"
#include "support/each_statement.h"

namespace room_outbox {
namespace {

using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

TEST(StatementTextTest, TheMySqlSetNeverUsesReturning) {
  size_t statements = 0;
  testing::ForEachStatementText(
      StatementSet::kMySql, [&](std::string_view name, std::string_view text) {
        ++statements;
        EXPECT_THAT(std::string(text), Not(HasSubstr("RETURNING"))) << name;
        EXPECT_THAT(std::string(text), Not(HasSubstr("IF NOT EXISTS"))) << name;
      });
  EXPECT_GT(statements, sql::kStatements.size());  // the list shapes come in several sizes
}

TEST(StatementTextTest, SetsDifferOnlyInTheCommit) {
  std::set<std::string> differ;
  for (const sql::Statement* listed : sql::kStatements) {
    const sql::Statement& entry = *listed;
    for (size_t n : SizesOf(entry)) {
      if (StatementText(StatementSet::kMariaDb, entry, n) !=
          StatementText(StatementSet::kMySql, entry, n)) {
        differ.insert(std::string(entry.name));
      }
    }
  }
  EXPECT_EQ(differ, (std::set<std::string>{"insert_command_log", "insert_command_log_checked",
                                           "insert_outbox_rows", "commit_read_back",
                                           "commit_read_back_checked"}));
  EXPECT_FALSE(InSet(sql::Stmt::kInsertCommandLogChecked, StatementSet::kMySql));
  EXPECT_FALSE(InSet(sql::Stmt::kCommitReadBack, StatementSet::kMariaDb));
  EXPECT_EQ(StatementText(StatementSet::kMariaDb, sql::Stmt::kCommitReadBack), "");
}

TEST(StatementTextTest, ShapesAreComposedForEverySizeTheStoresUse) {
  EXPECT_EQ(SizesOf(sql::Stmt::kClaimWindow).size(), 1u);
  EXPECT_EQ(SizesOf(sql::Stmt::kLease).size(), kListSizes.size());
  EXPECT_EQ(SizesOf(sql::Stmt::kInsertOutbox).size(), sql::kMaxRowsPerOutboxInsert);

  const std::string lease = StatementText(StatementSet::kMySql, sql::Stmt::kLease, 8);
  EXPECT_THAT(lease, StartsWith(std::string(sql::kLeasePrefix)));
  EXPECT_THAT(lease, EndsWith("IN " + Placeholders(8)));
  EXPECT_EQ(StatementName(sql::Stmt::kLease, 8), "lease_8");
  EXPECT_EQ(StatementName(sql::Stmt::kClaimWindow), "claim_window");

  const std::string rooms = StatementText(StatementSet::kMariaDb, sql::Stmt::kRoomPrefix, 2);
  EXPECT_EQ(rooms, "(" + std::string(sql::kRoomPrefixPart) + ") UNION ALL (" +
                       std::string(sql::kRoomPrefixPart) + ")");

  const std::string rows = StatementText(StatementSet::kMariaDb, sql::Stmt::kInsertOutbox, 2);
  EXPECT_EQ(rows, std::string(sql::kInsertOutboxHead) + std::string(sql::kInsertOutboxRow) + ", " +
                      std::string(sql::kInsertOutboxRow) + " RETURNING id, event_id");
  EXPECT_EQ(StatementText(StatementSet::kMySql, sql::Stmt::kInsertOutbox, 2),
            rows.substr(0, rows.find(" RETURNING")));

  const std::string schedule = StatementText(StatementSet::kMySql, sql::Stmt::kSchedule, 1);
  EXPECT_EQ(schedule, std::string(sql::kScheduleHead) + std::string(sql::kScheduleWhen) +
                          std::string(sql::kScheduleTail) + Placeholders(1));
}

TEST(StatementTextTest, EveryStatementHasTheNumberOfPlaceholdersItsShapeImplies) {
  // A list shape's placeholder count grows with its size by the same step for every size.
  for (const sql::Statement* listed : sql::kStatements) {
    const sql::Statement& entry = *listed;
    const auto sizes = SizesOf(entry);
    if (sizes.size() < 2 || !InSet(entry, StatementSet::kMySql)) {
      continue;
    }
    auto count = [&](size_t n) {
      const std::string text = StatementText(StatementSet::kMySql, entry, n);
      return static_cast<size_t>(std::count(text.begin(), text.end(), '?'));
    };
    const size_t step = (count(sizes[1]) - count(sizes[0])) / (sizes[1] - sizes[0]);
    EXPECT_GT(step, 0u) << entry.name;
    for (size_t n : sizes) {
      EXPECT_EQ(count(n), count(sizes[0]) + step * (n - sizes[0])) << entry.name << " " << n;
    }
  }
}

}  // namespace
}  // namespace room_outbox
