// outbox-relay: parses the command line, sets up the process-wide libraries and runs the relay.
// Everything else lives in the relay library (relay_app.h).
#include <CLI/CLI.hpp>

#include <iostream>

#include "build_info.h"
#include "global_init.h"
#include "mysql/mariadb_outbox_store.h"
#include "relay_app.h"
#include "tencent/tencent_im_publisher.h"

int main(int argc, char** argv) {
  using room_outbox::relay::CliOptions;
  CliOptions cli;
  CLI::App app{"outbox-relay: delivers pending room_outbox events to Tencent IM"};
  app.set_version_flag("--version", std::string("outbox-relay ") + room_outbox::relay::Version());
  app.add_option("--config", cli.config_path, "Config file (TOML)")->capture_default_str();
  auto* once = app.add_flag("--once", cli.once,
                            "Try every due row once, batch after batch, then exit "
                            "(exit 1 when rows failed or the database is unreachable)");
  app.add_flag("--check-config", cli.check_config,
               "Validate the config, print it with secrets redacted, exit 0 or 2")
      ->excludes(once);
  app.add_option("--log-level", cli.log_level, "Override [log] level")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error"}));
  // As CLI11_PARSE, but a usage error exits 2 (the documented code), not CLI11's own codes.
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? room_outbox::relay::kExitOk : room_outbox::relay::kExitUsage;
  }

  room_outbox::relay::MysqlLibraryGuard mysql_library;
  room_outbox::relay::CurlGlobalGuard curl_library;
  for (const room_outbox::Status* s : {&mysql_library.status(), &curl_library.status()}) {
    if (!s->ok()) {
      std::cerr << "outbox-relay: " << s->error().message << "\n";
      return room_outbox::relay::kExitRuntimeFailure;
    }
  }
  room_outbox::relay::RelayFactories factories;
  factories.make_store = [](const room_outbox::MysqlOptions& options) {
    return std::unique_ptr<room_outbox::OutboxStore>(room_outbox::MakeMariaDbOutboxStore(options));
  };
  factories.make_publisher = [](const room_outbox::TencentImOptions& options) {
    return room_outbox::MakeTencentImPublisher(options);
  };
  return room_outbox::relay::RunRelay(cli, factories);
}
