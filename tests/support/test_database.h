// A private database on the test MariaDB server (started by scripts/run-tests.sh, socket in
// $ROOM_OUTBOX_TEST_MYSQL_SOCKET). Each TestDatabase creates its own uniquely named schema,
// migrates it as `outbox-relay migrate` does (schema/*.sql in order), and drops it on
// destruction.
//
// Without the server, construction fails the test loudly (ADD_FAILURE + valid() false): an
// integration test never skips.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/mysql/mysql_handles.h"
#include "room_outbox/options.h"

namespace room_outbox::testing {

// The socket of the test server, or empty (with a test failure recorded) when not set.
std::string TestMysqlSocket();

class TestDatabase {
 public:
  TestDatabase();
  ~TestDatabase();
  TestDatabase(const TestDatabase&) = delete;
  TestDatabase& operator=(const TestDatabase&) = delete;

  bool valid() const { return conn_ != nullptr; }
  const std::string& name() const { return name_; }

  // Options that reach this database (root over the unix socket).
  MysqlOptions Options() const;

  // Migrates to the latest schema as `outbox-relay migrate` does (the constructor does this once;
  // a second run applies nothing).
  void ApplySchema();

  // Runs SQL text (test-controlled, no outside data) and returns every row; NULL is nullopt.
  // A failing statement records a test failure and returns no rows.
  using Row = std::vector<std::optional<std::string>>;
  std::vector<Row> Query(const std::string& sql);
  // The first column of the first row as an integer (0 when empty or NULL).
  int64_t Scalar(const std::string& sql);
  // Runs a statement that returns no rows; records a test failure when it fails.
  void Exec(const std::string& sql);

 private:
  core::MysqlPtr conn_;
  std::string socket_;
  std::string name_;
};

}  // namespace room_outbox::testing
