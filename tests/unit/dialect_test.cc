// ChooseDialect: each vendor's minimum (versions compare only within a vendor), the statement
// set and its capabilities, and [mysql] dialect forcing a set; ServerVersionOf and the texts.
#include "core/mysql/dialect.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace room_outbox {
namespace {

using ::testing::HasSubstr;

struct Case {
  const char* name;
  core::ServerVersion server;
  SqlDialect requested;
  bool accepted;
  core::StatementSet set;
};

TEST(DialectTest, ChoosesTheSetOfTheServerOrTheOneForced) {
  constexpr auto kMaria = core::ServerVendor::kMariaDb;
  constexpr auto kMy = core::ServerVendor::kMySql;
  const Case cases[] = {
      {"MariaDB 10.6.0, the minimum",
       {kMaria, 100600},
       SqlDialect::kAuto,
       true,
       core::StatementSet::kMariaDb},
      {"MariaDB 10.11.19 (Debian 12)",
       {kMaria, 101119},
       SqlDialect::kAuto,
       true,
       core::StatementSet::kMariaDb},
      {"MariaDB 11.4", {kMaria, 110400}, SqlDialect::kAuto, true, core::StatementSet::kMariaDb},
      {"MariaDB 10.5.22: no SKIP LOCKED", {kMaria, 100522}, SqlDialect::kAuto, false, {}},
      {"MySQL 8.0.1, the minimum",
       {kMy, 80001},
       SqlDialect::kAuto,
       true,
       core::StatementSet::kMySql},
      {"MySQL 8.0.36", {kMy, 80036}, SqlDialect::kAuto, true, core::StatementSet::kMySql},
      {"MySQL 8.4.3 LTS", {kMy, 80403}, SqlDialect::kAuto, true, core::StatementSet::kMySql},
      {"MySQL 8.0.0 (a development release)", {kMy, 80000}, SqlDialect::kAuto, false, {}},
      {"MySQL 5.7.44", {kMy, 50744}, SqlDialect::kAuto, false, {}},
      // Below MariaDB's minimum as a number, but a MySQL version: compared within its vendor.
      {"MySQL 9.1 is not compared with 10.6",
       {kMy, 90100},
       SqlDialect::kAuto,
       true,
       core::StatementSet::kMySql},
      {"the MySQL set forced on MariaDB (how CI runs it)",
       {kMaria, 101119},
       SqlDialect::kMySql,
       true,
       core::StatementSet::kMySql},
      {"the MariaDB set forced on MySQL",
       {kMy, 80036},
       SqlDialect::kMariaDb,
       true,
       core::StatementSet::kMariaDb},
      {"forcing a set does not lift the minimum", {kMy, 50744}, SqlDialect::kMySql, false, {}},
      {"nor on MariaDB", {kMaria, 100411}, SqlDialect::kMySql, false, {}},
  };
  for (const Case& c : cases) {
    auto dialect = core::ChooseDialect(c.server, c.requested);
    ASSERT_EQ(dialect.has_value(), c.accepted) << c.name;
    if (!c.accepted) {
      EXPECT_EQ(dialect.error().code, ErrorCode::kInvalidArgument) << c.name;
      continue;
    }
    EXPECT_EQ(dialect->statements, c.set) << c.name;
    EXPECT_EQ(dialect->returning, c.set == core::StatementSet::kMariaDb) << c.name;
    EXPECT_EQ(dialect->server.number, c.server.number) << c.name;
  }
}

TEST(DialectTest, RefusalNamesTheVersionFoundAndTheOneRequired) {
  auto mysql = core::ChooseDialect(core::ServerVersion{core::ServerVendor::kMySql, 50744},
                                   SqlDialect::kAuto);
  ASSERT_FALSE(mysql);
  EXPECT_THAT(mysql.error().message, HasSubstr("the server is MySQL 5.7.44"));
  EXPECT_THAT(mysql.error().message, HasSubstr("needs MySQL 8.0.1 or later"));
  auto maria = core::ChooseDialect(core::ServerVersion{core::ServerVendor::kMariaDb, 100522},
                                   SqlDialect::kAuto);
  ASSERT_FALSE(maria);
  EXPECT_THAT(maria.error().message, HasSubstr("the server is MariaDB 10.5.22"));
  EXPECT_THAT(maria.error().message, HasSubstr("needs MariaDB 10.6.0 or later"));
}

TEST(DialectTest, TheHandshakeNamesVendorAndVersion) {
  EXPECT_EQ(core::ServerVersionText(core::ServerVersionOf(true, 101119)), "MariaDB 10.11.19");
  EXPECT_EQ(core::ServerVersionText(core::ServerVersionOf(false, 80403)), "MySQL 8.4.3");
  EXPECT_STREQ(core::StatementSetName(core::StatementSet::kMySql), "mysql");
  EXPECT_STREQ(core::StatementSetName(core::StatementSet::kMariaDb), "mariadb");
}

}  // namespace
}  // namespace room_outbox
