// PrivateMariaDb: a MariaDB server of a test's own (scripts/mariadb-local.sh under a directory of
// the test), so that stopping or restarting it disturbs no other test.
//
// RAII: the destructor stops a server this object started. Not thread-safe.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "room_outbox/options.h"

namespace room_outbox::testing {

class PrivateMariaDb {
 public:
  explicit PrivateMariaDb(std::filesystem::path dir) : dir_(std::move(dir)) {}
  ~PrivateMariaDb() { Stop(); }
  PrivateMariaDb(const PrivateMariaDb&) = delete;
  PrivateMariaDb& operator=(const PrivateMariaDb&) = delete;

  // Installs the datadir when new, starts the server and waits until it answers. `mariadbd_args`
  // go to the server (a --port=... one turns TCP on, e.g. with --ssl-cert for a TLS test). On a
  // failure records a test failure with the script's output and returns false.
  bool Start(const std::vector<std::string>& mariadbd_args = {});
  // Shuts the server down and waits for the process to end (no-op when never started); false
  // when the script failed.
  bool Stop();
  const std::string& socket() const { return socket_; }

  // Creates the database and applies schema/*.sql in file-name order.
  bool CreateDatabase(const std::string& name);
  // Root over the socket, the given database.
  MysqlOptions Options(const std::string& database) const;

 private:
  std::filesystem::path dir_;
  std::string socket_;
};

}  // namespace room_outbox::testing
