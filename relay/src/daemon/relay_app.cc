#include "daemon/relay_app.h"

#include <signal.h>
#include <systemd/sd-daemon.h>

#include <chrono>
#include <functional>
#include <iostream>
#include <optional>
#include <string_view>

#include "config/config.h"
#include "core/config/duration.h"
#include "daemon/app_budget_share.h"
#include "daemon/beat_on_use_clock.h"
#include "daemon/build_info.h"
#include "daemon/journal_sink.h"
#include "daemon/lease_takeover.h"
#include "daemon/lifecycle_log.h"
#include "daemon/node_lock_start.h"
#include "daemon/read_only_watch.h"
#include "daemon/relay_telemetry.h"
#include "daemon/reload.h"
#include "daemon/schema_wait.h"
#include "daemon/signals.h"
#include "daemon/wake_listener.h"
#include "daemon/wake_socket.h"
#include "migrate/migrate.h"
#include "telemetry/log_line.h"
#include "telemetry/metrics.h"
#include "worker/loop_clock.h"
#include "worker/outbox_worker.h"

namespace room_outbox::relay {
namespace {

using std::chrono::milliseconds;

// sd_notify is a no-op (returns 0) outside systemd and its failures change nothing for the relay,
// so its result is deliberately ignored.
void Notify(const std::string& state) { (void)sd_notify(0, state.c_str()); }

const char* SignalName(int sig) { return sig == SIGINT ? "SIGINT" : "SIGTERM"; }

// SIGTERM/SIGINT: the first asks the worker to stop; later ones only log (the marking is never
// skipped). SIGHUP: `on_reload`.
core::Result<std::unique_ptr<SignalWatcher>> WatchSignals(Logger& logger, const Config& config,
                                                          LoopSignal& stop,
                                                          SignalWatcher::ReloadHandler on_reload) {
  return SignalWatcher::Start(
      [&logger, &config, &stop](int sig, int count) {
        if (count == 1) {
          logger.Info(Lifecycle("signal received: no new claims; finishing rows in flight", config)
                          .Add("signal", SignalName(sig)));
          Notify("STOPPING=1\nSTATUS=stopping: finishing rows in flight");
          stop.RequestStop();
        } else {
          logger.Warn(Lifecycle("signal received again: still finishing rows in flight and marking "
                                "their results (bounded by publish_timeout)",
                                config)
                          .Add("signal", SignalName(sig))
                          .Add("count", count));
        }
      },
      std::move(on_reload));
}

// The config file with the command line's overrides (--log-level).
core::Result<Config> LoadForCli(const CliOptions& cli) {
  auto config = LoadConfig(cli.config_path);
  if (!config || cli.log_level.empty()) {
    return config;
  }
  if (!IsValidLogLevel(cli.log_level)) {
    return core::Fail(
        ErrorCode::kInvalidArgument,
        "--log-level \"" + cli.log_level + "\" is not one of trace, debug, info, warn, error");
  }
  config->log.level = cli.log_level;
  return config;
}

// [wake] socket: bound and read by a thread that wakes the worker (null when off, or for --once,
// which never idles and must not take the socket of a daemon running beside it). A failure to
// bind is logged (path and system error) and ends the start (exit 1).
core::Result<std::unique_ptr<WakeListener>> ListenForWakeUps(const CliOptions& cli,
                                                             const Config& config, LoopSignal& stop,
                                                             Metrics& metrics, Logger& logger) {
  if (cli.once || config.wake_socket.empty()) {
    return std::unique_ptr<WakeListener>();
  }
  auto listener =
      WakeSocket::Bind(config.wake_socket, config.wake.socket_mode).and_then([&](auto socket) {
        return WakeListener::Start(
            std::move(socket),
            [&stop, &metrics](uint64_t datagrams) {
              metrics.AddWakeups(datagrams);
              stop.Wake();
            },
            logger, config.wake.min_interval);
      });
  if (!listener) {
    logger.Error(Lifecycle("cannot bind the wake socket", config)
                     .Add("wake_socket", config.wake_socket)
                     .Add("error", listener.error().message));
    return listener;
  }
  logger.Info(
      Lifecycle("wake socket bound: a datagram starts a round within min_interval", config)
          .Add("wake_socket", config.wake_socket)
          .Add("wake_socket_mode", FormatSocketMode(config.wake.socket_mode))
          .Add("wake_min_interval_ms", static_cast<int64_t>(config.wake.min_interval.count())));
  return listener;
}

// --check-config: the effective config on stdout; 0 when the daemon could run with it, else 2.
int CheckConfigOnly(const Config& config) {
  std::cout << RenderEffectiveConfig(config);
  for (const std::string& warning : config.warnings) {
    std::cerr << "outbox-relay: warning: " << warning << "\n";
  }
  Status runnable = CheckRunnable(config);
  if (!runnable.ok()) {
    std::cerr << "outbox-relay: " << runnable.error().message << "\n";
    return kExitUsage;
  }
  std::cerr << "outbox-relay: " << config.path << " is valid\n";
  return kExitOk;
}

// --once: drains and logs the summary; 1 when rows failed, were left unattempted, or the
// database failed.
int RunOnce(OutboxWorker& worker, Logger& logger, const Config& config) {
  DrainResult drain = worker.Drain();
  LogLine summary = Lifecycle("drain finished", config);
  summary.Add("rounds", static_cast<uint64_t>(drain.rounds))
      .Add("published", static_cast<uint64_t>(drain.published))
      .Add("skipped", static_cast<uint64_t>(drain.skipped))
      .Add("failed", static_cast<uint64_t>(drain.failed))
      .Add("undecodable", static_cast<uint64_t>(drain.undecodable))
      .Add("unattempted", static_cast<uint64_t>(drain.unattempted))
      .Add("stopped", drain.stopped);
  if (drain.store_error) {
    summary.Add("error", drain.store_error->message);
  } else if (drain.unattempted > 0) {
    summary.Add("error", std::to_string(drain.unattempted) +
                             " due rows were given back without an attempt (see the "
                             "warnings above: lease, stop or a room held behind a failed row)");
  }
  if (!drain.ok()) {
    logger.Error(summary);
    return kExitRuntimeFailure;
  }
  logger.Info(summary);
  return kExitOk;
}

// The worker in the mode `cli` asks for; returns when it is done and every result is marked.
int RunWorker(const CliOptions& cli, const Config& config, RelayStore& store,
              RelayStore* ahead_store, core::Publisher& publisher, LoopClock& clock,
              LoopSignal& stop, Metrics& metrics, Logger& logger) {
  const WorkerConfig& w = config.outbox_worker;
  auto on_status = [&metrics](std::string_view status) {
    // The worker reports "database error, ..." on the first failed round and "running" once a
    // round works again; a successful stats read also sets db_up (Metrics::SetPending).
    if (status.rfind("database error", 0) == 0) metrics.SetDbUp(false);
    if (status == "running") metrics.SetDbUp(true);
    Notify("STATUS=" + std::string(status));
  };
  WorkerOptions options = ToWorkerOptions(w, config.node_id, config.tencent_im.skip_event_types,
                                          config.tencent_im.breaker_cooldown);
  options.wake_min_interval = config.wake.min_interval;
  options.max_age_by_type = config.max_age_by_type;
  options.pack_max_events = config.tencent_im.pack_max_events;
  options.max_body_bytes = config.tencent_im.max_body_bytes;
  options.group_id_prefix = config.tencent_im.group_id_prefix;
  metrics.DeclareExpiredTypes(options.max_age_by_type);
  metrics.DeclareSkippedTypes(config.tencent_im.skip_event_types);
  OutboxWorker worker(std::move(options), store, publisher, clock, stop, metrics, logger, on_status,
                      ahead_store);
  if (cli.once) {
    return RunOnce(worker, logger, config);
  }
  Notify("READY=1\nSTATUS=running: claiming due rows every " +
         core::FormatDuration(w.poll_interval));
  worker.Run();
  return kExitOk;
}

// --once: the database's schema version (migrate.h): false, logged, when it is older than this
// relay needs or the server is below its minimum version (the caller exits 2: a human is waiting).
// A database that cannot be reached now is not refused: the worker connects when it can (and its
// statements, prepared at connect, fail on a schema they do not fit). The daemon waits instead
// (schema_wait.h).
bool SchemaReady(const Config& config, Logger& logger) {
  auto schema = migrate::CheckSchemaVersion(config.mysql);
  if (schema) {
    return true;
  }
  if (schema.error().code == ErrorCode::kInvalidArgument) {
    logger.Error(Lifecycle("database refused", config).Add("error", schema.error().message));
    return false;
  }
  logger.Warn(Lifecycle("cannot check the database schema version now", config)
                  .Add("error", schema.error().message));
  return true;
}

// The daemon waits, not ready, for a schema older than it needs (--once refused it already).
// The exit code when it stops waiting without starting (refused: 2; stopped: 0), none when ready.
std::optional<int> AwaitSchema(const CliOptions& cli, const Config& config, LoopClock& clock,
                               LoopSignal& stop, Telemetry& telemetry, Logger& logger) {
  if (cli.once) {
    return std::nullopt;
  }
  const SchemaWait schema = WaitForSchema(config, logger, clock, stop, telemetry.metrics, Notify);
  if (schema == SchemaWait::kReady) {
    return std::nullopt;
  }
  const int code = schema == SchemaWait::kRefused ? kExitUsage : kExitOk;
  logger.Info(Lifecycle("outbox-relay stopped", config).Add("exit_code", code));
  return code;
}

// The daemon claims only while it holds its node_id's lock (node_lock_start.h); --once takes
// none. False: another running relay holds it.
bool TakeNodeLock(const Config& config, RelayStore& store, RelayStore* ahead, Logger& logger,
                  std::unique_ptr<LockedStores>& locked) {
  auto taken = LockNode(config, store, ahead, logger);
  if (!taken) {
    return false;
  }
  locked = std::make_unique<LockedStores>(std::move(*taken));
  return true;
}

// The enabled and runnable relay: builds the publisher, the stores and the telemetry, runs the
// worker and takes them down in the order of the shutdown contract. Returns the exit code.
// The worker over stores whose refusals a ReadOnlyWatch reads, so a database that refuses writes
// is told apart from one that is away (read_only_watch.h).
int RunWatchedWorker(const CliOptions& cli, const Config& config, RelayStore& store,
                     RelayStore* ahead, core::Publisher& publisher, LoopClock& clock,
                     LoopSignal& stop, Telemetry& telemetry, Logger& logger) {
  ReadOnlyWatch read_only(telemetry.metrics, logger, telemetry.clock, config.node_id);
  ReadOnlyWatchedStore watched(store, read_only);
  std::unique_ptr<ReadOnlyWatchedStore> watched_ahead =
      ahead != nullptr ? std::make_unique<ReadOnlyWatchedStore>(*ahead, read_only) : nullptr;
  return RunWorker(cli, config, watched, watched_ahead.get(), publisher, clock, stop,
                   telemetry.metrics, logger);
}

// The claiming part of a run, on stores the daemon's node lock holds (`locked`; none for
// --once): the run's beat and the leases of relays gone given back (lease_takeover.h), this
// process's share of the app's IM budget (app_budget_share.h), the worker. Then, in the shutdown
// contract's order: the budget left while the database is still there, no more wake-ups (the
// socket file goes with the listener), and the node lock with its connection after every result
// is marked, the run's row with it. Returns the worker's exit code.
int RunClaiming(const CliOptions& cli, const Config& config, RelayStore& store, RelayStore* ahead,
                std::unique_ptr<LockedStores>& locked, core::Publisher& im, LoopClock& clock,
                LoopSignal& stop, Telemetry& telemetry, std::unique_ptr<WakeListener>& wake,
                Logger& logger) {
  std::unique_ptr<LeaseTakeover> takeover =
      locked ? LeaseTakeover::Start(config, *locked->lock, locked->on_taken, telemetry.metrics,
                                    logger, telemetry.clock)
             : nullptr;
  std::unique_ptr<core::AppBudgetMember> budget_member =
      JoinAppBudget(config, telemetry.metrics, logger);
  const int exit_code =
      RunWatchedWorker(cli, config, locked ? *locked->store : store,
                       locked ? locked->ahead.get() : ahead, im, clock, stop, telemetry, logger);
  budget_member.reset();
  wake.reset();
  logger.Info(Lifecycle("worker stopped; closing the database connection", config));
  takeover.reset();
  locked.reset();
  return exit_code;
}

// The enabled and runnable relay: builds the publisher, the stores and the telemetry, waits for
// the schema, listens for wake-ups, takes the node lock, runs RunClaiming and takes the rest
// down after it: the stores, the publisher (no reload reaches it once it is gone), the
// telemetry. Returns the exit code.
int RunConfigured(const CliOptions& cli, const Config& config, const RelayFactories& factories,
                  ConfigReloader& reloader, LoopSignal& stop, Logger& logger) {
  auto publisher = factories.make_publisher(config.tencent_im);
  if (!publisher) {
    logger.Error(Lifecycle("cannot create the IM publisher", config)
                     .Add("error", publisher.error().message));
    return publisher.error().code == ErrorCode::kInvalidArgument ? kExitUsage : kExitRuntimeFailure;
  }
  // SIGHUP: a new secret key replaces the publisher's and drops its cached UserSig.
  core::Publisher& im = **publisher;
  reloader.SetReloadSecretKey([&im](const std::string& key) { im.ReloadSecretKey(key); });
  // Connects lazily: a database that is down at start is retried by the worker's back-off. The
  // daemon's claim ahead (outbox_worker.h) runs on a connection of its own.
  const std::chrono::milliseconds room_gap = config.outbox_worker.room_min_interval;
  std::unique_ptr<RelayStore> store = factories.make_store(config.mysql, room_gap);
  std::unique_ptr<RelayStore> ahead_store =
      cli.once ? nullptr : factories.make_store(config.mysql, room_gap);
  SystemLoopClock system_clock;  // the daemon's one clock
  Telemetry telemetry(system_clock);
  if (!StartTelemetry(config, logger, telemetry)) return kExitRuntimeFailure;
  BeatOnUseClock clock(system_clock, *telemetry.heartbeat,
                       HeartbeatSlice(telemetry.watchdog.get()));
  if (auto code = AwaitSchema(cli, config, clock, stop, telemetry, logger)) {
    reloader.SetReloadSecretKey({});
    return *code;
  }
  auto wake = ListenForWakeUps(cli, config, stop, telemetry.metrics, logger);
  if (!wake) return kExitRuntimeFailure;
  std::unique_ptr<LockedStores> locked;
  if (!cli.once && !TakeNodeLock(config, *store, ahead_store.get(), logger, locked)) {
    return kExitUsage;
  }
  const int exit_code = RunClaiming(cli, config, *store, ahead_store.get(), locked, im, clock, stop,
                                    telemetry, *wake, logger);
  ahead_store.reset();
  store.reset();
  reloader.SetReloadSecretKey({});
  publisher->reset();
  telemetry.parked_gauge.reset();
  telemetry.server.reset();
  logger.Info(Lifecycle("outbox-relay stopped", config).Add("exit_code", exit_code));
  return exit_code;
}

}  // namespace

int RunRelay(const CliOptions& cli, const RelayFactories& factories) {
  auto loaded = LoadForCli(cli);
  if (!loaded) {
    std::cerr << "outbox-relay: " << loaded.error().message << "\n";
    return kExitUsage;
  }
  const Config config = std::move(*loaded);
  if (cli.check_config) {
    return CheckConfigOnly(config);
  }

  // journald priorities; SIGHUP reloads.
  std::unique_ptr<Logger> logger = MakeRelayStderrLogger(config.log);
  // A changed IM secret key goes to the publisher once it exists (RunConfigured).
  ConfigReloader reloader(config, cli.log_level, *logger);
  LoopSignal stop;
  // Before any other thread exists (the metrics server and libraries may start some).
  auto watcher = WatchSignals(*logger, config, stop, [&reloader] { (void)reloader.Reload(); });
  if (!watcher) {
    logger->Error(Lifecycle("cannot watch signals", config).Add("error", watcher.error().message));
    return kExitRuntimeFailure;
  }
  // A peer closing a socket must be an error return, not a process kill.
  (void)signal(SIGPIPE, SIG_IGN);

  logger->Info(StartingLine(config, cli.once));
  for (const std::string& warning : config.warnings) {
    logger->Warn(Lifecycle("configuration warning", config).Add("warning", warning));
  }
  if (!config.outbox_worker.enabled) {
    logger->Info(
        Lifecycle("outbox worker disabled ([outbox_worker] enabled = false); exiting", config));
    Notify("READY=1\nSTATUS=outbox worker disabled");
    return kExitOk;
  }
  Status runnable = CheckRunnable(config);
  if (!runnable.ok()) {
    logger->Error(Lifecycle("invalid config", config).Add("error", runnable.error().message));
    return kExitUsage;
  }
  if (cli.once && !SchemaReady(config, *logger)) {
    return kExitUsage;
  }
  return RunConfigured(cli, config, factories, reloader, stop, *logger);
}

}  // namespace room_outbox::relay
