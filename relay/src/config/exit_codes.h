// The process exit codes of outbox-relay and its operator commands (room-sim uses the same).
//
// They are also the systemd contract: Restart=on-failure restarts on 1, not on 2.
//   0  success: the daemon stopped on SIGTERM/SIGINT, --once drained everything, --check-config
//      found the config valid and runnable, or [outbox_worker] enabled = false
//   1  runtime failure: --once could not reach the database or left rows that failed; the
//      metrics endpoint or the [wake] socket could not be bound; a library could not be
//      initialised
//   2  bad usage or invalid config (parse error, unknown key, bad value, missing IM app id or
//      secret key, the templates' placeholder app id), or a database the binary refuses: a server
//      below its minimum version; for --once and the operator commands a schema older than it
//      needs (run `outbox-relay migrate`; the daemon waits for it, not ready, instead:
//      daemon/schema_wait.h); for migrate a schema newer than it knows; for the daemon a node_id
//      whose lock another running relay on the same database holds (daemon/node_lock_start.h).
//      Restarting would not help: an operator must act.
#pragma once

namespace room_outbox::relay {

enum ExitCode : int {
  kExitOk = 0,
  kExitRuntimeFailure = 1,
  kExitUsage = 2,
};

}  // namespace room_outbox::relay
