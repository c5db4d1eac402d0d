// kStatements, the list the grammar check and the statement tests walk, holds every statement
// outbox_sql.h declares in namespace Stmt, and every statement a program prepares at connect.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "core/app_budget/member_store.h"
#include "core/mysql/outbox_sql.h"
#include "ops/ops_store.h"
#include "store/mariadb_hook_store.h"
#include "store/mariadb_relay_store.h"
#include "store/node_lock.h"

namespace room_outbox {
namespace {

std::string ReadSource(const std::string& relative) {
  std::ifstream in(std::string(ROOM_OUTBOX_SOURCE_DIR) + "/" + relative);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The name of each `inline constexpr Statement kX = Maker("name", ...)` in namespace Stmt.
std::set<std::string> DeclaredStatementNames() {
  const std::string header = ReadSource("core/mysql/outbox_sql.h");
  const size_t begin = header.find("namespace Stmt {");
  const size_t end = header.find("}  // namespace Stmt", begin);
  if (begin == std::string::npos || end == std::string::npos) return {};
  const std::string block = header.substr(begin, end - begin);
  static const std::regex kDeclaration(R"re(inline constexpr Statement k\w+\s*=\s*\w+\(\s*"(\w+)")re");
  std::set<std::string> names;
  for (auto it = std::sregex_iterator(block.begin(), block.end(), kDeclaration);
       it != std::sregex_iterator(); ++it) {
    names.insert((*it)[1].str());
  }
  return names;
}

std::set<std::string> ListedStatementNames() {
  std::set<std::string> names;
  for (const core::sql::Statement* listed : core::sql::kStatements) {
    names.insert(std::string(listed->name));
  }
  return names;
}

TEST(StatementListTest, EveryDeclaredStatementIsListed) {
  const std::set<std::string> declared = DeclaredStatementNames();
  // The scan reads the header: it must see the statements it is checking for.
  ASSERT_GE(declared.size(), 40u) << "outbox_sql.h: namespace Stmt not found or changed shape";
  EXPECT_EQ(declared, ListedStatementNames());
  EXPECT_EQ(declared.size(), core::sql::kStatements.size());
}

TEST(StatementListTest, TheScanSeesADeclarationOnTwoLines) {
  // kInsertCommandLogChecked's maker call starts on the line after its name.
  EXPECT_TRUE(DeclaredStatementNames().contains("insert_command_log_checked"));
}

template <typename List>
void ExpectListed(const List& program, const char* list_name) {
  for (const core::sql::Statement* entry : program) {
    const bool listed = std::find(core::sql::kStatements.begin(), core::sql::kStatements.end(),
                                  entry) != core::sql::kStatements.end();
    EXPECT_TRUE(listed) << list_name << ": " << entry->name << " is not in kStatements";
  }
}

TEST(StatementListTest, EveryStatementAProgramPreparesIsListed) {
  ExpectListed(internal::kHookStatements, "kHookStatements");
  ExpectListed(relay::kRelayStatements, "kRelayStatements");
  ExpectListed(relay::kNodeLockStatements, "kNodeLockStatements");
  ExpectListed(relay::ops::kOpsStatements, "kOpsStatements");
  ExpectListed(core::kAppBudgetStatements, "kAppBudgetStatements");
}

}  // namespace
}  // namespace room_outbox
