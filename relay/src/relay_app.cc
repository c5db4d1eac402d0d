#include "relay_app.h"

#include <signal.h>
#include <systemd/sd-daemon.h>

#include <iostream>
#include <string_view>

#include "build_info.h"
#include "clock.h"
#include "config.h"
#include "duration.h"
#include "log_line.h"
#include "metrics.h"
#include "outbox_worker.h"
#include "signals.h"

namespace room_outbox::relay {
namespace {

// sd_notify is a no-op (returns 0) outside systemd and its failures change nothing for the relay,
// so its result is deliberately ignored.
void Notify(const std::string& state) { (void)sd_notify(0, state.c_str()); }

LogLine Lifecycle(std::string_view message, const Config& config) {
  LogLine line(message);
  line.Add("worker", "room_outbox").Add("node_id", config.node_id);
  return line;
}

const char* SignalName(int sig) { return sig == SIGINT ? "SIGINT" : "SIGTERM"; }

}  // namespace

int RunRelay(const CliOptions& cli, const RelayFactories& factories) {
  auto loaded = LoadConfig(cli.config_path);
  if (!loaded) {
    std::cerr << "outbox-relay: " << loaded.error().message << "\n";
    return kExitUsage;
  }
  Config config = std::move(*loaded);
  if (!cli.log_level.empty()) {
    if (!IsValidLogLevel(cli.log_level)) {
      std::cerr << "outbox-relay: --log-level \"" << cli.log_level
                << "\" is not one of trace, debug, info, warn, error\n";
      return kExitUsage;
    }
    config.log.level = cli.log_level;
  }

  if (cli.check_config) {
    std::cout << RenderEffectiveConfig(config);
    Status runnable = CheckRunnable(config);
    if (!runnable.ok()) {
      std::cerr << "outbox-relay: " << runnable.error().message << "\n";
      return kExitUsage;
    }
    std::cerr << "outbox-relay: " << config.path << " is valid\n";
    return kExitOk;
  }

  std::unique_ptr<Logger> logger = MakeStderrLogger(config.log);
  StopSignal stop;
  // Before any other thread exists (the metrics server and libraries may start some).
  auto watcher = SignalWatcher::Start([&](int sig, int count) {
    if (count == 1) {
      logger->Info(Lifecycle("signal received: no new claims; finishing rows in flight", config)
                       .Add("signal", SignalName(sig)));
      Notify("STOPPING=1\nSTATUS=stopping: finishing rows in flight");
      stop.RequestStop();
    } else {
      logger->Warn(Lifecycle("signal received again: still finishing rows in flight and marking "
                             "their results (bounded by publish_timeout)",
                             config)
                       .Add("signal", SignalName(sig))
                       .Add("count", count));
    }
  });
  if (!watcher) {
    logger->Error(Lifecycle("cannot watch signals", config).Add("error", watcher.error().message));
    return kExitRuntimeFailure;
  }
  // A peer closing a socket must be an error return, not a process kill.
  (void)signal(SIGPIPE, SIG_IGN);

  const WorkerConfig& w = config.outbox_worker;
  logger->Info(Lifecycle("outbox-relay starting", config)
                   .Add("version", Version())
                   .Add("config", config.path)
                   .Add("mode", cli.once ? "once" : "daemon")
                   .Add("poll_interval", FormatDuration(w.poll_interval))
                   .Add("batch_size", static_cast<uint64_t>(w.batch_size))
                   .Add("publish_timeout", FormatDuration(w.publish_timeout))
                   .Add("retry_strategy", w.retry_strategy)
                   .Add("max_in_flight", static_cast<uint64_t>(w.max_in_flight))
                   .Add("ordering", w.ordering == Ordering::kPerRoom ? "per_room" : "none")
                   .Add("lease", FormatDuration(w.lease))
                   .Add("room_min_interval", FormatDuration(w.room_min_interval))
                   .Add("im_endpoint", config.tencent_im.endpoint)
                   .Add("mysql", config.mysql.socket.empty()
                                     ? config.mysql.host + ":" + std::to_string(config.mysql.port)
                                     : config.mysql.socket));

  if (!w.enabled) {
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

  auto publisher = factories.make_publisher(config.tencent_im);
  if (!publisher) {
    logger->Error(Lifecycle("cannot create the IM publisher", config)
                      .Add("error", publisher.error().message));
    return publisher.error().code == ErrorCode::kInvalidArgument ? kExitUsage : kExitRuntimeFailure;
  }
  // Connects lazily: a database that is down at start is retried by the worker's back-off.
  std::unique_ptr<OutboxStore> store = factories.make_store(config.mysql);

  Metrics metrics;
  std::unique_ptr<MetricsServer> metrics_server;
  if (!config.metrics.listen.empty()) {
    auto started = MetricsServer::Start(config.metrics.listen, metrics);
    if (!started) {
      logger->Error(Lifecycle("cannot serve metrics", config)
                        .Add("listen", config.metrics.listen)
                        .Add("error", started.error().message));
      return kExitRuntimeFailure;
    }
    metrics_server = std::move(*started);
    logger->Info(Lifecycle("metrics endpoint listening", config)
                     .Add("url", "http://" + config.metrics.listen + "/metrics"));
  }

  SystemClock clock;
  int exit_code = kExitOk;
  {
    OutboxWorker worker(ToWorkerOptions(w, config.node_id, config.tencent_im.skip_event_types),
                        *store, **publisher, clock, stop, metrics, *logger,
                        [](std::string_view status) { Notify("STATUS=" + std::string(status)); });
    if (cli.once) {
      DrainResult drain = worker.Drain();
      LogLine summary = Lifecycle("drain finished", config);
      summary.Add("rounds", static_cast<uint64_t>(drain.rounds))
          .Add("published", static_cast<uint64_t>(drain.published))
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
      if (drain.ok()) {
        logger->Info(summary);
      } else {
        logger->Error(summary);
        exit_code = kExitRuntimeFailure;
      }
    } else {
      Notify("READY=1\nSTATUS=running: claiming due rows every " + FormatDuration(w.poll_interval));
      worker.Run();
    }
  }
  // The worker has marked every result it got; only now may the database go away.
  logger->Info(Lifecycle("worker stopped; closing the database connection", config));
  store.reset();
  publisher->reset();
  metrics_server.reset();
  logger->Info(Lifecycle("outbox-relay stopped", config).Add("exit_code", exit_code));
  return exit_code;
}

}  // namespace room_outbox::relay
