#include "daemon/schema_wait.h"

#include "daemon/lifecycle_log.h"
#include "migrate/migrate.h"

namespace room_outbox::relay {

SchemaWait WaitForSchema(const Config& config, Logger& logger, LoopClock& clock, LoopSignal& stop,
                         Metrics& metrics, const std::function<void(const std::string&)>& notify,
                         std::chrono::milliseconds recheck) {
  bool waited = false;
  while (!stop.stop_requested()) {
    auto verdict = migrate::JudgeSchema(config.mysql);
    if (!verdict) {
      if (verdict.error().code == ErrorCode::kInvalidArgument) {
        logger.Error(Lifecycle("database refused", config).Add("error", verdict.error().message));
        return SchemaWait::kRefused;
      }
      // Not reachable now: the worker connects when it can (and its statements, prepared at
      // connect, fail on a schema they do not fit).
      logger.Warn(Lifecycle("cannot check the database schema version now", config)
                      .Add("error", verdict.error().message));
      metrics.SetNotReadyReason("");
      return SchemaWait::kReady;
    }
    if (!verdict->too_old()) {
      if (waited) {
        logger.Info(Lifecycle("database schema migrated; starting work", config)
                        .Add("schema_version", verdict->found));
      }
      metrics.SetNotReadyReason("");
      return SchemaWait::kReady;
    }
    const std::string why = verdict->Explain();
    if (!waited) {
      logger.Error(Lifecycle("waiting for the database schema: not ready until it is migrated",
                             config)
                       .Add("schema_version", verdict->found)
                       .Add("schema_version_needed", migrate::kRequiredSchemaVersion)
                       .Add("recheck_interval_ms", static_cast<int64_t>(recheck.count()))
                       .Add("error", why));
      waited = true;
    }
    metrics.SetNotReadyReason(why);
    // READY=1: the start is over (systemctl start, and a package upgrade's restart, return); the
    // relay's readiness for work is /readyz and STATUS=, as for a database that is down.
    notify("READY=1\nSTATUS=not ready: " + why);
    if (clock.SleepFor(recheck, stop)) {
      break;
    }
  }
  return SchemaWait::kStopped;
}

}  // namespace room_outbox::relay
