// The outbox-relay process: config, logging, signals, systemd notification and the worker,
// assembled in the order the shutdown contract needs. main() parses the command line, sets up the
// process-wide libraries and calls RunRelay with the real store and publisher factories.
//
// Exit codes: config/exit_codes.h.
//
// Shutdown (SIGTERM or SIGINT): no new claim; rows in flight finish or reach publish_timeout;
// their results are marked; then the database connection is closed and the process exits 0. A
// second signal is logged and changes nothing: the marking is never skipped.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "config/exit_codes.h"
#include "core/publisher.h"
#include "core/result.h"
#include "room_outbox/options.h"
#include "store/relay_store.h"

namespace room_outbox::relay {

struct CliOptions {
  std::string config_path = "/etc/room-outbox/relay.toml";
  bool once = false;          // drain what is due, then exit
  bool check_config = false;  // validate, print the effective config (secrets redacted), exit
  std::string log_level;      // overrides [log] level when set
};

// How the process builds its database store and IM publisher. The store's room gap is
// [outbox_worker] room_min_interval (MariaDbRelayStore).
struct RelayFactories {
  std::function<std::unique_ptr<RelayStore>(const MysqlOptions&, std::chrono::milliseconds)>
      make_store;
  std::function<core::Result<std::unique_ptr<core::Publisher>>(const TencentImOptions&)>
      make_publisher;
};

// Runs the relay as `cli` says and returns the process exit code. Blocks SIGTERM/SIGINT in the
// calling thread (call it before starting any other thread).
int RunRelay(const CliOptions& cli, const RelayFactories& factories);

}  // namespace room_outbox::relay
