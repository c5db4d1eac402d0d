// outbox-relay migrate [--dry-run] [--config PATH]: creates or upgrades the database schema
// (migrate.h) with the [mysql] settings of the config, and prints one JSON object on stdout:
//
//   {"server": "MariaDB 10.11.19", "dialect": "mariadb", "from_version": 2, "to_version": 4,
//    "dry_run": false, "steps": [{"version": 3, "name": "003_parked", "statements": 5,
//    "already_applied": 0}, ...]}
//
// from_version is null for a database without the version table. With --dry-run nothing
// changes; each step lists its statements instead ("sql": [...]). Exit codes (exit_codes.h): 0
// done (also when nothing was missing); 1 the database cannot be reached or a statement failed
// (stdout carries {"error": ..., "code": ...}); 2 usage or config, or a database whose schema is
// newer than this binary knows.
#pragma once

#include <ostream>
#include <string>

namespace room_outbox::relay::migrate {

struct MigrateCli {
  std::string config_path = "/etc/room-outbox/relay.toml";
  bool dry_run = false;
};

// Runs the command and returns the process exit code.
int RunMigrateCommand(const MigrateCli& cli, std::ostream& out, std::ostream& err);

}  // namespace room_outbox::relay::migrate
