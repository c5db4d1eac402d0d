// FailoverServer: a private MariaDB (private_mariadb.h) for failover tests, with the outbox
// schema and the relay's and the hook's accounts of docs/grants.sql ('<role>_fo'@'localhost',
// password kFailoverPassword). Neither account has READ ONLY ADMIN, so `SET GLOBAL read_only = ON`
// refuses their writes (errors 1290/1836), as a replica or a demoted primary refuses a room
// service's; root (ALL PRIVILEGES, READ ONLY ADMIN included on MariaDB 10.11) writes through it,
// which is how the tests add rows while the server is read-only.
//
// Not thread-safe, except SetReadOnly (its own connection per call), which a TcpProxy action may
// run on the proxy's thread.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "room_outbox/options.h"
#include "support/private_mariadb.h"

namespace room_outbox::testing {

inline constexpr char kFailoverPassword[] = "failover-test-password";

class FailoverServer {
 public:
  // Under `dir` (created by the caller), database `database`.
  FailoverServer(std::filesystem::path dir, std::string database)
      : server_(std::move(dir)), database_(std::move(database)) {}

  // Starts the server, creates the database with its schema and both accounts. On a failure
  // records a test failure and returns false.
  bool Start();
  const std::string& socket() const { return server_.socket(); }
  const std::string& database() const { return database_; }

  // The account of `role` ("relay" or "hook") over the unix socket, with its password.
  MysqlOptions As(const std::string& role) const;
  static std::string User(const std::string& role) { return role + "_fo"; }

  // As root; a failure is a test failure. Scalar: the first column of the first row (-1: none).
  void Exec(const std::string& sql) const;
  int64_t Scalar(const std::string& sql) const;
  std::vector<std::vector<std::string>> Rows(const std::string& sql) const;
  void SetReadOnly(bool on) const;

  // `count` pending rows "<prefix>-<i>", room "<prefix>-room-<i % rooms>", due now.
  void InsertRows(const std::string& prefix, int count, int rooms) const;
  // Every row's delivery columns (id, status, retry_count, claim_token, next_attempt_at_ms,
  // updated_at_ms), one line per row in id order: equal before and after means nothing changed.
  std::string RowStates() const;
  int64_t Pending() const {
    return Scalar("SELECT COUNT(*) FROM room_outbox WHERE status = 'pending'");
  }
  // Rows of `command_id` in room_command_log.
  int64_t Logged(const std::string& command_id) const;

 private:
  PrivateMariaDb server_;
  std::string database_;
};

}  // namespace room_outbox::testing
