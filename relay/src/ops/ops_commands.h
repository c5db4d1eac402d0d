// The operator subcommands of outbox-relay: stats, show, park, requeue, purge.
//
//   outbox-relay stats   [--config PATH] [--top N] [--sort oldest|backlog] [--window DURATION]
//   outbox-relay show    EVENT_ID [--config PATH]
//   outbox-relay park    EVENT_ID --reason TEXT [--config PATH]
//   outbox-relay requeue (EVENT_ID | --room ROOM_ID | --all-parked) [--config PATH]
//   outbox-relay purge   --published-before DURATION [--command-log-before DURATION]
//                        [--batch-size N] [--dry-run] [--config PATH]
//
// Each prints one JSON object on stdout and exits 0 (done), 1 (runtime failure: the database
// cannot be reached, no such event, a row in the wrong state or held by a relay; stdout then
// carries {"error": "...", "code": "..."}) or 2 (usage or config; the reason on stderr).
// Durations are the config's ("90s", "24h") plus a day unit ("7d"), and must be positive.
//
// The commands read only [mysql] of the config: they run where the daemon's config is, beside a
// running daemon, without the IM secret. See ops_store.h for how they avoid relays' claims.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

namespace room_outbox::relay::ops {

struct OpsCli {
  std::string command;  // "stats", "show", "park", "requeue" or "purge"
  std::string config_path = "/etc/room-outbox/relay.toml";
  std::string event_id;  // show, park, requeue
  std::string reason;    // park
  std::string room_id;   // requeue --room
  bool all_parked = false;
  std::string published_before;    // purge
  std::string command_log_before;  // purge (empty: the command log is kept)
  int64_t batch_size = 1000;       // purge, requeue
  bool dry_run = false;            // purge
  int64_t top_rooms = 10;          // stats
  std::string sort = "oldest";     // stats: top_rooms by the oldest head, or "backlog"
  std::string window = "10s";      // stats: between the two samples of the rates; "0s": none
};

// Runs `cli.command` and returns the process exit code. `out` gets the JSON, `err` the
// human-readable errors.
int RunOpsCommand(const OpsCli& cli, std::ostream& out, std::ostream& err);

}  // namespace room_outbox::relay::ops
