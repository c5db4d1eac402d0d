// RefusedCallerStatement: the statements a commit's callback may not run (they end or commit the
// transaction the command is written in), read past blanks, comments and parentheses.
#include "caller_statement_check.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace room_outbox {
namespace {

using internal::RefusedCallerStatement;
using ::testing::HasSubstr;

TEST(CallerStatementCheckTest, RefusesWhatEndsOrCommitsTheTransaction) {
  for (const char* sql :
       {"COMMIT", "commit work", "ROLLBACK", "rollback to savepoint a", "BEGIN",
        "START TRANSACTION", "XA START 'x'", "CREATE TABLE t (a INT)", "alter table t add b int",
        "DROP TABLE t", "TRUNCATE t", "RENAME TABLE a TO b", "LOCK TABLES t WRITE",
        "UNLOCK TABLES", "GRANT SELECT ON *.* TO u", "FLUSH TABLES", "ANALYZE TABLE t",
        "OPTIMIZE TABLE t", "LOAD INDEX INTO CACHE t", "SET autocommit = 1",
        "set @@SESSION.AutoCommit=ON", "CHANGE MASTER TO MASTER_HOST='h'"}) {
    EXPECT_TRUE(RefusedCallerStatement(sql).has_value()) << sql;
  }
}

TEST(CallerStatementCheckTest, ReadsTheVerbPastBlanksCommentsAndParentheses) {
  for (const char* sql : {"  \n\tCOMMIT", "/* a */ COMMIT", "-- note\nCOMMIT", "# note\nCOMMIT",
                          "((COMMIT))", "/*!40101 COMMIT */", "/*M!100100 DROP TABLE t */",
                          "/* a */ /* b */ create table t (a int)"}) {
    EXPECT_TRUE(RefusedCallerStatement(sql).has_value()) << sql;
  }
}

TEST(CallerStatementCheckTest, LetsDataStatementsRun) {
  for (const char* sql :
       {"INSERT INTO room_snapshot (room_id, seq) VALUES (?, ?)",
        "UPDATE room_snapshot SET seq = ? WHERE room_id = ?", "DELETE FROM gifts WHERE id = ?",
        "REPLACE INTO t VALUES (?)", "SELECT seq FROM room_snapshot WHERE room_id = ? FOR UPDATE",
        "(SELECT 1) UNION (SELECT 2)", "SAVEPOINT a", "SET @seq = ?", "CALL add_gift(?)",
        "/* commit later */ INSERT INTO t VALUES (1)", "INSERT INTO t (note) VALUES ('COMMIT')",
        "LOAD DATA INFILE 'x' INTO TABLE t", ""}) {
    EXPECT_FALSE(RefusedCallerStatement(sql).has_value()) << sql;
  }
}

TEST(CallerStatementCheckTest, TheReasonNamesTheVerb) {
  EXPECT_THAT(RefusedCallerStatement("drop table t").value_or(""), HasSubstr("DROP"));
  EXPECT_THAT(RefusedCallerStatement("SET autocommit=1").value_or(""), HasSubstr("autocommit"));
}

}  // namespace
}  // namespace room_outbox
