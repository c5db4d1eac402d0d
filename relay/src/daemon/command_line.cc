#include "daemon/command_line.h"

#include <CLI/CLI.hpp>
#include <string>

#include "daemon/build_info.h"
#include "daemon/relay_app.h"
#include "migrate/migrate_command.h"
#include "ops/ops_commands.h"

namespace room_outbox::relay {

namespace {

// The daemon's own options: --config, --once, --check-config, --log-level.
void AddDaemonOptions(CLI::App& app, CliOptions& cli) {
  app.add_option("--config", cli.config_path, "Config file (TOML)")->capture_default_str();
  auto* once = app.add_flag("--once", cli.once,
                            "Try every due row once, batch after batch, then exit "
                            "(exit 1 when rows failed or the database is unreachable)");
  app.add_flag("--check-config", cli.check_config,
               "Validate the config, print it with secrets redacted, exit 0 or 2")
      ->excludes(once);
  app.add_option("--log-level", cli.log_level, "Override [log] level")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error"}));
}

// An operator subcommand (relay/src/ops/ops_commands.h: JSON on stdout, exit 0 / 1 / 2) with its
// --config; running it sets ops.command to its name.
CLI::App* AddOpsCommand(CLI::App& app, CliOptions& cli, ops::OpsCli& ops, const char* name,
                        const char* help) {
  CLI::App* sub = app.add_subcommand(name, help);
  sub->add_option("--config", cli.config_path, "Config file (TOML); only [mysql] is used")
      ->capture_default_str();
  sub->final_callback([&ops, name] { ops.command = name; });
  return sub;
}

// The commands that read: stats and show.
void AddReadCommands(CLI::App& app, CliOptions& cli, ops::OpsCli& ops) {
  CLI::App* stats = AddOpsCommand(app, cli, ops, "stats",
                                  "Pending and parked rows, oldest pending age, rooms held back, "
                                  "the arrival and delivery rates and the time to drain, the top "
                                  "rooms");
  stats->add_option("--top", ops.top_rooms, "Rooms listed in top_rooms")->capture_default_str();
  stats
      ->add_option("--sort", ops.sort,
                   "top_rooms by the oldest pending head (oldest) or the most pending rows "
                   "(backlog)")
      ->check(CLI::IsMember({"oldest", "backlog"}))
      ->capture_default_str();
  stats
      ->add_option("--window", ops.window,
                   "Time between the two samples the rates are measured over (0s: no rates)")
      ->capture_default_str();
  AddOpsCommand(app, cli, ops, "show", "One row and its envelope")
      ->add_option("EVENT_ID", ops.event_id, "The row's event_id")
      ->required();
}

// The commands that write: park, requeue and purge.
void AddWriteCommands(CLI::App& app, CliOptions& cli, ops::OpsCli& ops) {
  CLI::App* park = AddOpsCommand(app, cli, ops, "park",
                                 "Set a pending row aside: no more attempts until requeued");
  park->add_option("EVENT_ID", ops.event_id, "The row's event_id")->required();
  park->add_option("--reason", ops.reason, "Why (stored in last_error)")->required();
  CLI::App* requeue = AddOpsCommand(app, cli, ops, "requeue",
                                    "Parked rows -> pending, due at once, retry_count kept");
  requeue->add_option("EVENT_ID", ops.event_id, "One parked row's event_id");
  requeue->add_option("--room", ops.room_id, "Every parked row of this room");
  requeue->add_flag("--all-parked", ops.all_parked, "Every parked row");
  requeue->add_option("--batch-size", ops.batch_size, "Rows per UPDATE")->capture_default_str();
  CLI::App* purge = AddOpsCommand(app, cli, ops, "purge",
                                  "Delete published rows, idle rooms of the room schedule (and "
                                  "command-log rows) past retention");
  purge
      ->add_option("--published-before", ops.published_before,
                   "Delete published outbox rows published longer ago than this (e.g. 7d)")
      ->required();
  purge->add_option("--command-log-before", ops.command_log_before,
                    "Also delete command-log rows created longer ago than this (e.g. 30d)");
  purge->add_option("--batch-size", ops.batch_size, "Rows per DELETE (one short transaction)")
      ->capture_default_str();
  purge->add_flag("--dry-run", ops.dry_run, "Count what would be deleted; delete nothing");
}

}  // namespace

std::unique_ptr<CLI::App> MakeCommandLine(CliOptions& cli, ops::OpsCli& ops,
                                          migrate::MigrateCli& migrate) {
  auto app =
      std::make_unique<CLI::App>("outbox-relay: delivers pending room_outbox events to Tencent IM");
  app->set_version_flag("--version", std::string("outbox-relay ") + Version());
  AddDaemonOptions(*app, cli);
  app->require_subcommand(0, 1);
  AddReadCommands(*app, cli, ops);
  AddWriteCommands(*app, cli, ops);
  AddOpsCommand(*app, cli, ops, "migrate", "Create or upgrade the database schema (schema/*.sql)")
      ->add_flag("--dry-run", migrate.dry_run, "List the steps that would run; change nothing");
  return app;
}

}  // namespace room_outbox::relay
