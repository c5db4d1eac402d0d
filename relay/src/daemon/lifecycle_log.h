// The lifecycle lines of outbox-relay (start, signals, endpoints, reload, drain summary, stop).
// Each starts with worker=room_outbox node_id=<node_id>, as every outbox line does; every
// duration in them is an integer field named <name>_ms (never a duration string: those belong to
// the config file and --check-config).
#pragma once

#include <string_view>

#include "config/config.h"
#include "telemetry/log_line.h"

namespace room_outbox::relay {

// A lifecycle line: `message` with the worker and node_id fields.
LogLine Lifecycle(std::string_view message, const Config& config);

// "outbox-relay starting": version, config path, mode (daemon or once), the [outbox_worker]
// settings, the IM endpoint and the database address.
LogLine StartingLine(const Config& config, bool once);

}  // namespace room_outbox::relay
