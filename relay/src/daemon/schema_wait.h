// The daemon's start on a database whose schema is older than it needs: it stays up, not ready,
// until `outbox-relay migrate` has brought the schema up, then starts its work by itself. A
// package upgrade that restarts the relay before the operator migrates therefore leaves a relay
// that waits, never one that is down.
//
// While it waits: /readyz answers 503 with SchemaVerdict::Explain() (the version found, the one
// needed, the command to run); the log says it once (error), and once more when the schema is
// ready; systemd gets READY=1 (the start is over: `systemctl start` and a package upgrade's
// restart return instead of waiting for an operator) with STATUS= saying why; the check is made again every kSchemaRecheckInterval; SIGTERM
// and SIGINT end the wait at once (exit 0). The clock's sleep beats the heartbeat, so /healthz
// and the watchdog see a live process.
//
// `--once` and the operator commands never wait: a human is waiting for them, so they refuse an
// older schema at once (exit 2, CheckSchemaVersion).
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include "config/config.h"
#include "telemetry/log_line.h"
#include "telemetry/metrics.h"
#include "worker/loop_clock.h"

namespace room_outbox::relay {

// How often a waiting relay reads the schema version again.
inline constexpr std::chrono::milliseconds kSchemaRecheckInterval = std::chrono::seconds(5);

enum class SchemaWait {
  kReady,    // the schema is recent enough (or the database cannot be reached now: the worker
             // connects when it can)
  kStopped,  // SIGTERM or SIGINT came while waiting
  kRefused,  // the database is refused for good (a server below its minimum version): exit 2
};

// Returns once the schema is ready, a stop is requested, or the database is refused (logged).
// `notify` receives the sd_notify text while waiting.
SchemaWait WaitForSchema(const Config& config, Logger& logger, LoopClock& clock, LoopSignal& stop,
                         Metrics& metrics, const std::function<void(const std::string&)>& notify,
                         std::chrono::milliseconds recheck = kSchemaRecheckInterval);

}  // namespace room_outbox::relay
