// outbox-relay: parses the command line (command_line.h), sets up the process-wide libraries and
// runs the relay. Everything else lives in the relay library (relay_app.h).
#include <sys/prctl.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <iostream>
#include <memory>

#include "core/c_libraries.h"
#include "core/tencent/tencent_im_publisher.h"
#include "daemon/command_line.h"
#include "daemon/relay_app.h"
#include "migrate/migrate_command.h"
#include "ops/ops_commands.h"
#include "store/mariadb_relay_store.h"

int main(int argc, char** argv) {
  // Every mode holds the database password (the daemon also the IM key and UserSigs): no core
  // dump, and no ptrace or /proc/PID/mem by other processes of the same user.
  if (::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) {
    std::cerr << "outbox-relay: prctl(PR_SET_DUMPABLE, 0): " << std::strerror(errno) << "\n";
    return room_outbox::relay::kExitRuntimeFailure;
  }
  room_outbox::relay::CliOptions cli;
  room_outbox::relay::ops::OpsCli ops;
  room_outbox::relay::migrate::MigrateCli migrate;
  const std::unique_ptr<CLI::App> app = room_outbox::relay::MakeCommandLine(cli, ops, migrate);
  // As CLI11_PARSE, but a usage error exits 2 (the documented code), not CLI11's own codes.
  try {
    app->parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app->exit(e);
    return rc == 0 ? room_outbox::relay::kExitOk : room_outbox::relay::kExitUsage;
  }

  room_outbox::core::CLibraries libraries;
  if (!libraries.status().ok()) {
    std::cerr << "outbox-relay: " << libraries.status().error().message << "\n";
    return room_outbox::relay::kExitRuntimeFailure;
  }
  if (ops.command == "migrate") {
    migrate.config_path = cli.config_path;
    return room_outbox::relay::migrate::RunMigrateCommand(migrate, std::cout, std::cerr);
  }
  if (!ops.command.empty()) {
    ops.config_path = cli.config_path;
    return room_outbox::relay::ops::RunOpsCommand(ops, std::cout, std::cerr);
  }
  room_outbox::relay::RelayFactories factories;
  factories.make_store = [](const room_outbox::MysqlOptions& options,
                            std::chrono::milliseconds room_gap) {
    return std::unique_ptr<room_outbox::relay::RelayStore>(
        room_outbox::relay::MakeMariaDbRelayStore(options, room_gap.count()));
  };
  factories.make_publisher = [](const room_outbox::TencentImOptions& options) {
    return room_outbox::core::MakeTencentImPublisher(options);
  };
  return room_outbox::relay::RunRelay(cli, factories);
}
