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
      core::StatementSet::kMySql, [&](std::string_view name, std::string_view text) {
        ++statements;
        EXPECT_THAT(std::string(text), Not(HasSubstr("RETURNING"))) << name;
        EXPECT_THAT(std::string(text), Not(HasSubstr("IF NOT EXISTS"))) << name;
      });
  EXPECT_GT(statements, core::sql::kStatements.size());  // the list shapes come in several sizes
}

TEST(StatementTextTest, SetsDifferOnlyInTheCommit) {
  std::set<std::string> differ;
  for (const core::sql::Statement* listed : core::sql::kStatements) {
    const core::sql::Statement& entry = *listed;
    for (size_t n : core::SizesOf(entry)) {
      if (core::StatementText(core::StatementSet::kMariaDb, entry, n) !=
          core::StatementText(core::StatementSet::kMySql, entry, n)) {
        differ.insert(std::string(entry.name));
      }
    }
  }
  EXPECT_EQ(differ, (std::set<std::string>{"insert_command_log", "insert_command_log_checked",
                                           "insert_outbox_rows", "commit_read_back",
                                           "commit_read_back_checked"}));
  EXPECT_FALSE(core::InSet(core::sql::Stmt::kInsertCommandLogChecked, core::StatementSet::kMySql));
  EXPECT_FALSE(core::InSet(core::sql::Stmt::kCommitReadBack, core::StatementSet::kMariaDb));
  EXPECT_EQ(core::StatementText(core::StatementSet::kMariaDb, core::sql::Stmt::kCommitReadBack),
            "");
}

TEST(StatementTextTest, ShapesAreComposedForEverySizeTheStoresUse) {
  EXPECT_EQ(core::SizesOf(core::sql::Stmt::kClaimWindow).size(), 1u);
  EXPECT_EQ(core::SizesOf(core::sql::Stmt::kLease).size(), core::kListSizes.size());
  EXPECT_EQ(core::SizesOf(core::sql::Stmt::kInsertOutbox).size(),
            core::sql::kMaxRowsPerOutboxInsert);

  const std::string lease =
      core::StatementText(core::StatementSet::kMySql, core::sql::Stmt::kLease, 8);
  EXPECT_THAT(lease, StartsWith(std::string(core::sql::kLeasePrefix)));
  EXPECT_THAT(lease, EndsWith("IN " + core::Placeholders(8)));
  EXPECT_EQ(core::StatementName(core::sql::Stmt::kLease, 8), "lease_8");
  EXPECT_EQ(core::StatementName(core::sql::Stmt::kClaimWindow), "claim_window");

  const std::string rooms =
      core::StatementText(core::StatementSet::kMariaDb, core::sql::Stmt::kRoomPrefix, 2);
  EXPECT_EQ(rooms, "(" + std::string(core::sql::kRoomPrefixPart) + ") UNION ALL (" +
                       std::string(core::sql::kRoomPrefixPart) + ")");

  const std::string rows =
      core::StatementText(core::StatementSet::kMariaDb, core::sql::Stmt::kInsertOutbox, 2);
  EXPECT_EQ(rows, std::string(core::sql::kInsertOutboxHead) +
                      std::string(core::sql::kInsertOutboxRow) + ", " +
                      std::string(core::sql::kInsertOutboxRow) + " RETURNING id, event_id");
  EXPECT_EQ(core::StatementText(core::StatementSet::kMySql, core::sql::Stmt::kInsertOutbox, 2),
            rows.substr(0, rows.find(" RETURNING")));

  const std::string schedule =
      core::StatementText(core::StatementSet::kMySql, core::sql::Stmt::kSchedule, 1);
  EXPECT_EQ(schedule, std::string(core::sql::kScheduleHead) +
                          std::string(core::sql::kScheduleWhen) +
                          std::string(core::sql::kScheduleTail) + core::Placeholders(1));
}

TEST(StatementTextTest, EveryStatementHasTheNumberOfPlaceholdersItsShapeImplies) {
  // A list shape's placeholder count grows with its size by the same step for every size.
  for (const core::sql::Statement* listed : core::sql::kStatements) {
    const core::sql::Statement& entry = *listed;
    const auto sizes = core::SizesOf(entry);
    if (sizes.size() < 2 || !core::InSet(entry, core::StatementSet::kMySql)) {
      continue;
    }
    auto count = [&](size_t n) {
      const std::string text = core::StatementText(core::StatementSet::kMySql, entry, n);
      return static_cast<size_t>(std::count(text.begin(), text.end(), '?'));
    };
    const size_t step = (count(sizes[1]) - count(sizes[0])) / (sizes[1] - sizes[0]);
    EXPECT_GT(step, 0u) << entry.name;
    for (size_t n : sizes) {
      EXPECT_EQ(count(n), count(sizes[0]) + step * (n - sizes[0])) << entry.name << " " << n;
    }
  }
}

// The idle room's due time is one number in the SQL text (ROOM_OUTBOX_IDLE_ROOM_MS) and in the
// code that writes it (sql::kIdleRoomDueMs).
TEST(StatementTextTest, TheIdleRoomsDueTimeIsOneNumber) {
  const std::string text =
      core::StatementText(core::StatementSet::kMariaDb, core::sql::Stmt::kServerNowRooms);
  EXPECT_NE(text.find(std::to_string(core::sql::kIdleRoomDueMs)), std::string::npos) << text;
}

}  // namespace
}  // namespace room_outbox
