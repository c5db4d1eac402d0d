#include "ops/ops_commands.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "config/config.h"
#include "config/exit_codes.h"
#include "core/config/duration.h"
#include "migrate/migrate.h"
#include "ops/drain_rates.h"
#include "ops/ops_store.h"

namespace room_outbox::relay::ops {
namespace {

// Keys in the documented order (ordered_json keeps insertion order).
using json = nlohmann::ordered_json;

constexpr int64_t kMaxBatchSize = 100000;
constexpr int64_t kDayMs = 24LL * 3600 * 1000;
constexpr int64_t kMaxTopRooms = 1000;
// stats --window: the longest wait between the rates' two samples.
constexpr std::chrono::milliseconds kMaxStatsWindow{std::chrono::minutes(5)};

// What stats measures and how (the parsed options).
struct StatsRequest {
  RoomOrder order = RoomOrder::kOldestHead;
  std::chrono::milliseconds window{0};
};

core::Result<StatsRequest> ParseStats(const OpsCli& cli) {
  StatsRequest request;
  if (cli.sort == "backlog") {
    request.order = RoomOrder::kLargestBacklog;
  } else if (cli.sort != "oldest") {
    return core::Fail(ErrorCode::kInvalidArgument,
                      "--sort: unknown value \"" + cli.sort + "\" (accepted: oldest, backlog)");
  }
  auto window = core::ParseDuration(cli.window);
  if (!window || window->count() < 0 || *window > kMaxStatsWindow) {
    return core::Fail(
        ErrorCode::kInvalidArgument,
        "--window: \"" + cli.window + "\" is not a duration of 0s to 5m (e.g. \"10s\")");
  }
  request.window = *window;
  return request;
}

// A rate as stats prints it: to a tenth.
json Tenths(double v) { return json(std::round(v * 10) / 10); }

// A positive duration: the config's syntax plus a day unit ("7d").
core::Result<int64_t> ParseAge(const std::string& option, const std::string& text) {
  int64_t ms = 0;
  if (text.size() > 1 && text.back() == 'd') {
    const std::string days = text.substr(0, text.size() - 1);
    auto hours = core::ParseDuration(days + "h");
    if (!hours || hours->count() > std::numeric_limits<int64_t>::max() / 24) {
      return core::Fail(ErrorCode::kInvalidArgument, option + ": invalid duration \"" + text +
                                                         "\" (e.g. \"7d\", \"168h\", \"30m\")");
    }
    ms = hours->count() * 24;
  } else {
    auto d = core::ParseDuration(text);
    if (!d) {
      return core::Fail(ErrorCode::kInvalidArgument,
                        option + ": invalid duration \"" + text +
                            "\": expected an integer and a unit ms, s, m, h or d, e.g. \"7d\", "
                            "\"168h\", \"30m\"");
    }
    ms = d->count();
  }
  if (ms <= 0) {
    return core::Fail(ErrorCode::kInvalidArgument,
                      option + ": must be a positive duration, got \"" + text + "\"");
  }
  return ms;
}

json Nullable(const std::optional<std::string>& v) { return v ? json(*v) : json(nullptr); }
json Nullable(const std::optional<int64_t>& v) { return v ? json(*v) : json(nullptr); }

// The history, oldest first: each entry with waited_ms, the time from the entry before it (the
// commit for the first one kept when none was lost) to this attempt's start (its at_ms less its
// latency); null for the first kept entry when older ones were cut.
json AttemptsJson(const OutboxRowDetail& d) {
  json out = json::array();
  // The end of what came before the entry; -1: unknown (older entries were cut).
  int64_t before =
      d.attempt_count == static_cast<int64_t>(d.attempts.size()) ? d.created_at_ms : -1;
  for (const AttemptEntry& e : d.attempts) {
    const int64_t started = e.at_ms - e.latency_ms;
    out.push_back(
        {{"at_ms", e.at_ms},
         {"node_id", e.node_id},
         {"pack_events", e.pack_events},
         {"outcome", e.outcome},
         {"detail", e.detail},
         {"latency_ms", e.latency_ms},
         {"waited_ms", before >= 0 ? json(std::max<int64_t>(started - before, 0)) : json()}});
    before = e.at_ms;
  }
  return out;
}

json RowJson(const OutboxRowDetail& d) {
  json o = {{"event_id", d.event_id},
            {"event_type", d.event_type},
            {"room_id", d.room_id},
            {"command_id", d.command_id},
            {"request_id", d.request_id},
            {"status", d.status},
            {"retry_count", d.retry_count},
            {"last_error", Nullable(d.last_error)},
            {"created_at_ms", d.created_at_ms},
            {"updated_at_ms", d.updated_at_ms},
            {"published_at_ms", Nullable(d.published_at_ms)},
            {"next_attempt_at_ms", d.next_attempt_at_ms},
            {"parked_at_ms", Nullable(d.parked_at_ms)},
            {"leased", d.leased},
            {"attempt_count", d.attempt_count},
            {"attempts", AttemptsJson(d)}};
  json envelope = json::parse(d.envelope, nullptr, /*allow_exceptions=*/false);
  if (envelope.is_discarded()) {
    // An undecodable envelope is shown as stored, so the operator can see why it fails.
    o["envelope"] = nullptr;
    o["envelope_text"] = d.envelope;
  } else {
    o["envelope"] = std::move(envelope);
  }
  return o;
}

std::string_view CodeName(ErrorCode code) { return ErrorCodeName(code); }

int RuntimeFailure(std::ostream& out, std::ostream& err, const std::string& command,
                   const Error& error) {
  const std::string& message = error.message;
  out << json{{"error", message}, {"code", CodeName(error.code)}}.dump() << "\n";
  err << "outbox-relay " << command << ": " << message << "\n";
  return kExitRuntimeFailure;
}

int Usage(std::ostream& err, const std::string& command, const std::string& message) {
  err << "outbox-relay " << command << ": " << message << "\n";
  return kExitUsage;
}

// The rates' two samples `window` apart (none when it is 0), then the counts.
int RunStats(OpsStore& store, const OpsCli& cli, const StatsRequest& request, std::ostream& out,
             std::ostream& err) {
  std::optional<DrainRates> rates;
  if (request.window.count() > 0) {
    auto first = store.Sample();
    if (!first) return RuntimeFailure(out, err, cli.command, first.error());
    std::this_thread::sleep_for(request.window);
    auto second = store.Sample();
    if (!second) return RuntimeFailure(out, err, cli.command, second.error());
    rates = RatesBetween(*first, *second);
  }
  auto stats = store.Stats(cli.top_rooms, request.order);
  if (!stats) return RuntimeFailure(out, err, cli.command, stats.error());
  json rooms = json::array();
  for (const RoomHead& r : stats->top_rooms) {
    rooms.push_back({{"room_id", r.room_id},
                     {"pending", r.pending},
                     {"head_event_id", r.head_event_id},
                     {"head_retry_count", r.head_retry_count},
                     {"head_last_error", Nullable(r.head_last_error)}});
  }
  json o = {{"pending", stats->pending},
            {"parked", stats->parked},
            {"oldest_pending_age_ms", stats->oldest_pending_age_ms},
            {"rooms_held_back", stats->rooms_held_back},
            {"rooms_pending", stats->rooms_pending},
            {"window_ms", rates ? rates->window_ms : 0},
            {"arrival_per_second", rates ? Tenths(rates->arrival_per_second) : json(nullptr)},
            {"delivery_per_second", rates ? Tenths(rates->delivery_per_second) : json(nullptr)},
            {"drain_eta_seconds",
             rates && rates->drain_eta_seconds ? Tenths(*rates->drain_eta_seconds) : json(nullptr)},
            {"top_rooms_sort", cli.sort},
            {"top_rooms_cut", stats->rooms_pending > static_cast<int64_t>(rooms.size())},
            {"top_rooms", std::move(rooms)}};
  out << o.dump() << "\n";
  return kExitOk;
}

int RunShow(OpsStore& store, const OpsCli& cli, std::ostream& out, std::ostream& err) {
  auto row = store.Show(cli.event_id);
  if (!row) return RuntimeFailure(out, err, cli.command, row.error());
  out << RowJson(*row).dump() << "\n";
  return kExitOk;
}

int RunPark(OpsStore& store, const OpsCli& cli, std::ostream& out, std::ostream& err) {
  auto row = store.Park(cli.event_id, cli.reason);
  if (!row) return RuntimeFailure(out, err, cli.command, row.error());
  out << json{{"parked", 1},
              {"event_id", row->event_id},
              {"room_id", row->room_id},
              {"status", row->status},
              {"retry_count", row->retry_count},
              {"last_error", Nullable(row->last_error)},
              {"parked_at_ms", Nullable(row->parked_at_ms)}}
             .dump()
      << "\n";
  return kExitOk;
}

int RunRequeue(OpsStore& store, const OpsCli& cli, std::ostream& out, std::ostream& err) {
  core::Result<int64_t> n = cli.all_parked         ? store.RequeueAllParked(cli.batch_size)
                            : !cli.room_id.empty() ? store.RequeueRoom(cli.room_id, cli.batch_size)
                                                   : store.RequeueEvent(cli.event_id);
  if (!n) return RuntimeFailure(out, err, cli.command, n.error());
  out << json{{"requeued", *n}}.dump() << "\n";
  return kExitOk;
}

int RunPurge(OpsStore& store, const OpsCli& cli, const PurgeRequest& request, std::ostream& out,
             std::ostream& err) {
  auto purged = store.Purge(request);
  if (!purged) return RuntimeFailure(out, err, cli.command, purged.error());
  json o = {{"outbox_deleted", purged->outbox_deleted},
            {"command_log_deleted", purged->command_log_deleted},
            {"idle_rooms_deleted", purged->idle_rooms_deleted},
            {"outbox_batches", purged->outbox_batches},
            {"command_log_batches", purged->command_log_batches},
            {"idle_rooms_batches", purged->idle_rooms_batches},
            {"published_before_ms", purged->outbox_cutoff_ms},
            {"command_log_before_ms",
             request.command_log_before_ms ? json(purged->command_log_cutoff_ms) : json(nullptr)},
            {"dry_run", request.dry_run}};
  if (request.dry_run) {
    o["outbox_matching"] = purged->outbox_matching;
    o["idle_rooms_matching"] = purged->idle_rooms_matching;
    o["command_log_matching"] =
        request.command_log_before_ms ? json(purged->command_log_matching) : json(nullptr);
  }
  out << o.dump() << "\n";
  return kExitOk;
}

}  // namespace

int RunOpsCommand(const OpsCli& cli, std::ostream& out, std::ostream& err) {
  const std::string& c = cli.command;
  // Argument checks first: a usage error never needs the database.
  PurgeRequest purge;
  StatsRequest stats;
  if (c == "show" || c == "park") {
    if (cli.event_id.empty()) return Usage(err, c, "EVENT_ID is required");
    if (c == "park" && cli.reason.empty()) return Usage(err, c, "--reason TEXT is required");
  } else if (c == "requeue") {
    const int selectors =
        (cli.event_id.empty() ? 0 : 1) + (cli.room_id.empty() ? 0 : 1) + (cli.all_parked ? 1 : 0);
    if (selectors != 1) {
      return Usage(err, c, "give exactly one of EVENT_ID, --room ROOM_ID, --all-parked");
    }
  } else if (c == "purge") {
    if (cli.published_before.empty()) return Usage(err, c, "--published-before is required");
    auto age = ParseAge("--published-before", cli.published_before);
    if (!age) return Usage(err, c, age.error().message);
    purge.published_before_ms = *age;
    if (!cli.command_log_before.empty()) {
      auto log_age = ParseAge("--command-log-before", cli.command_log_before);
      if (!log_age) return Usage(err, c, log_age.error().message);
      purge.command_log_before_ms = *log_age;
    }
    purge.dry_run = cli.dry_run;
    purge.batch_size = cli.batch_size;
  } else if (c == "stats") {
    auto parsed = ParseStats(cli);
    if (!parsed) return Usage(err, c, parsed.error().message);
    stats = *parsed;
  } else {
    return Usage(err, c, "unknown command");
  }
  if (cli.batch_size < 1 || cli.batch_size > kMaxBatchSize) {
    return Usage(err, c, "--batch-size must be 1.." + std::to_string(kMaxBatchSize));
  }
  if (cli.top_rooms < 0 || cli.top_rooms > kMaxTopRooms) {
    return Usage(err, c, "--top must be 0.." + std::to_string(kMaxTopRooms));
  }

  auto config = LoadConfig(cli.config_path, core::SecretUse::kDatabaseOnly);
  if (!config) return Usage(err, c, config.error().message);
  // A schema older than the commands need (or a server below its minimum) is refused with exit 2.
  if (auto schema = migrate::CheckSchemaVersion(config->mysql); !schema) {
    if (schema.error().code == ErrorCode::kInvalidArgument) {
      return Usage(err, c, schema.error().message);
    }
    return RuntimeFailure(out, err, c, schema.error());
  }
  auto store = OpsStore::Connect(config->mysql);
  if (!store) return RuntimeFailure(out, err, c, store.error());

  if (c == "stats") return RunStats(**store, cli, stats, out, err);
  if (c == "show") return RunShow(**store, cli, out, err);
  if (c == "park") return RunPark(**store, cli, out, err);
  if (c == "requeue") return RunRequeue(**store, cli, out, err);
  return RunPurge(**store, cli, purge, out, err);
}

}  // namespace room_outbox::relay::ops
