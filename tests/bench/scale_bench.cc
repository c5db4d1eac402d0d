// Benchmark 11: scale-out. One, two and three real outbox-relay processes on one database drain
// the same backlog against a stub answering after 20 ms, without a request budget and with one
// per relay (11a-11f), then with the relays' shipped defaults against a stub that limits the app
// to 200 calls/s as Tencent does (11g-11i: calls refused with 60007, drain time against rows/200;
// 11j-11l the same with each relay keeping its own budget, app_requests_per_second = 0, as
// before the relays shared the app's budget), and one relay against three, as shipped, on a
// backlog one room holds 2,000 rows of (11m/11n: the drain time of three against one).
// The stub counts what it delivered, so every run also shows whether each row went out exactly
// once.
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_database.h"
#include "bench/bench_relay.h"
#include "bench/benchmarks.h"
#include "bench/worker_harness.h"

namespace room_outbox::bench {
namespace {

using std::chrono::milliseconds;

constexpr milliseconds kLatency{20};
constexpr milliseconds kDrainLimit{300000};
constexpr milliseconds kPendingPoll{20};
constexpr double kBudgetPerRelay = 100;
constexpr size_t kMaxRelays = 3;
constexpr int kAppLimit = 200;  // Tencent's default app limit, calls per second

struct ScaleRun {
  size_t relays = 0;
  size_t rows = 0;
  size_t published = 0;  // rows the database holds as published at the end
  double seconds = 0;
  testing::FakeImStats im;
  bool relays_ok = true;  // every relay ran to the end and stopped on SIGTERM
  double Rate() const { return seconds > 0 ? static_cast<double>(published) / seconds : 0; }
  bool ExactlyOnce() const {
    return published == rows && im.delivered == rows && im.unique_event_ids == rows &&
           im.duplicates == 0;
  }
};

// How one run is set up.
struct ScaleSetup {
  size_t relays = 1;
  size_t rows = 0;
  std::optional<double> budget;  // requests_per_second of each relay; nullopt: 0 (off)
  int app_limit = 0;             // the stub's app-wide limit; 0: off, and the relays' budgets off
  bool shared = true;            // against the app limit: the app's budget shared (shipped)
  size_t hot_rows = 0;           // rows of one room (room-busy), committed before the others
};

std::unique_ptr<testing::FakeImServer> StartScaleStub(int app_limit) {
  testing::FakeImServerOptions options;
  options.app_limit_per_second = app_limit;
  options.latency = kLatency;
  options.record_requests = false;
  options.record_bodies = false;
  options.threads = 128;  // three relays' keep-alive connections, each holding a thread
  auto stub = std::make_unique<testing::FakeImServer>(options);
  if (!stub->running()) {
    throw BenchFailure("fake IM server: " + stub->start_error());
  }
  return stub;
}

// The relays' options: shipped defaults against the app limit, else the budget asked for.
BenchRelayOptions ScaleRelayOptions(const ScaleSetup& setup, size_t k) {
  BenchRelayOptions options;
  options.node_id = "bench-scale-" + std::to_string(k);
  if (setup.app_limit == 0) {
    // Each relay's own budget (or none), not a share of the app's.
    options.requests_per_second = setup.budget ? *setup.budget : 0;
    options.app_requests_per_second = 0;
  } else if (!setup.shared) {
    options.app_requests_per_second = 0;
  }
  return options;
}

// Starts the relays at once on a fresh backlog and times them until the database holds every
// row published.
ScaleRun RunRelays(const BenchContext& ctx, const ScaleSetup& setup) {
  const std::string name = "bench_scale_" + std::to_string(setup.relays) +
                           (setup.budget ? "_budget" : "") + (setup.app_limit > 0 ? "_app" : "") +
                           (setup.shared ? "" : "_own") + (setup.hot_rows > 0 ? "_hot" : "");
  auto stub = StartScaleStub(setup.app_limit);
  BenchDatabase db(ctx.socket, name);
  if (setup.hot_rows > 0) {
    OutboxFill hot;
    hot.rows = setup.hot_rows;
    hot.busy_every = 1;  // every row in room-busy
    hot.id_prefix = name + "-hot";
    hot.created_at_ms = NowMs();
    InsertPendingRows(db, hot);
  }
  OutboxFill fill;
  fill.rows = setup.rows;
  fill.rooms = ctx.scale_rooms;
  fill.id_prefix = name;
  fill.created_at_ms = NowMs();
  InsertPendingRows(db, fill);
  ScaleRun run;
  run.relays = setup.relays;
  run.rows = setup.rows + setup.hot_rows;
  std::vector<std::unique_ptr<BenchRelay>> processes;
  Stopwatch watch;
  for (size_t k = 1; k <= setup.relays; ++k) {
    const BenchRelayOptions options = ScaleRelayOptions(setup, k);
    processes.push_back(std::make_unique<BenchRelay>(
        ctx.relay_binary, std::filesystem::path(ctx.work_dir) / (name + "-" + std::to_string(k)),
        db, *stub, options));
  }
  for (auto& relay : processes) relay->WaitStarted();
  auto all_running = [&] {
    for (auto& relay : processes) {
      if (!relay->Running()) return false;
    }
    return true;
  };
  while (db.PendingCount() > 0 && all_running() &&
         watch.Millis() < static_cast<double>(kDrainLimit.count())) {
    std::this_thread::sleep_for(kPendingPoll);
  }
  run.seconds = watch.Seconds();
  for (auto& relay : processes) {
    run.relays_ok = relay->Running() && relay->Stop() && run.relays_ok;
  }
  run.published =
      static_cast<size_t>(db.Scalar("SELECT COUNT(*) FROM room_outbox WHERE status = 'published'"));
  run.im = stub->Stats();
  return run;
}

std::string ScaleText(const ScaleRun& run) {
  std::string text = FormatCount(run.Rate()) + " rows/s (" +
                     FormatCount(static_cast<double>(run.published)) + " rows in " +
                     FormatFixed(run.seconds, 2) + " s); IM requests " +
                     FormatCount(static_cast<double>(run.im.requests)) + ", delivered " +
                     FormatCount(static_cast<double>(run.im.delivered)) + ", distinct events " +
                     FormatCount(static_cast<double>(run.im.unique_event_ids)) + ", duplicates " +
                     std::to_string(run.im.duplicates) + ": " +
                     (run.ExactlyOnce() ? "every row published exactly once" : "NOT exactly once");
  return run.relays_ok ? text : text + "; A RELAY EXITED EARLY OR DID NOT STOP";
}

void AddRows(const BenchContext& ctx, Report& report, const std::vector<ScaleRun>& runs,
             const std::string& first_id, std::optional<double> budget) {
  const std::string backlog = FormatCount(static_cast<double>(ctx.scale_rows)) + " rows over " +
                              std::to_string(ctx.scale_rooms) + " rooms";
  const std::string settings =
      std::string(
          "per relay: shipped [outbox_worker] defaults (max_in_flight=16, per_room, "
          "room_min_interval=" +
          ShippedRoomMinInterval() + ", poll_interval=1s), requests_per_second=") +
      (budget ? FormatFixed(*budget, 0) : "0 (budget off)");
  for (size_t i = 0; i < runs.size(); ++i) {
    const ScaleRun& run = runs[i];
    std::string id = first_id;
    id.back() = static_cast<char>(id.back() + i);
    std::string ratio = FormatRatio(run.Rate(), runs[0].Rate()) + " vs 1 relay";
    if (budget) {
      const double sum = *budget * static_cast<double>(run.relays);
      ratio += "; " + FormatRatio(run.Rate(), sum) + " of " + FormatCount(sum) + "/s";
    }
    report.Add({id,
                std::to_string(run.relays) + (run.relays == 1 ? " relay" : " relays") +
                    " on one database, stub latency 20ms, " + backlog +
                    (budget ? ", budget per relay" : ", no budget"),
                settings, ScaleText(run), ratio});
  }
}

// 11g-11i (11j-11l with each relay's own budget): what the app limit refused, and the drain time
// against the limit's own pace.
void AddAppLimitRows(const BenchContext& ctx, Report& report, const std::vector<ScaleRun>& runs,
                     const std::string& first_id, bool shared) {
  const std::string backlog = FormatCount(static_cast<double>(ctx.app_limit_rows)) + " rows over " +
                              std::to_string(ctx.scale_rooms) + " rooms";
  for (size_t i = 0; i < runs.size(); ++i) {
    const ScaleRun& run = runs[i];
    std::string id = first_id;
    id.back() = static_cast<char>(id.back() + i);
    const double rows = static_cast<double>(run.rows);
    const double refused_percent =
        rows > 0 ? 100.0 * static_cast<double>(run.im.app_limited) / rows : 0;
    const double floor_seconds = rows / kAppLimit;
    report.Add({id,
                std::to_string(run.relays) + (run.relays == 1 ? " relay" : " relays") +
                    " on one database, stub latency 20ms, the stub limits the app to " +
                    std::to_string(kAppLimit) + " calls/s (60007 beyond), " + backlog,
                shared ? "per relay: every key at its shipped default ([tencent_im] "
                         "requests_per_second=200, app_requests_per_second=200: the app's "
                         "budget shared through the database)"
                       : "per relay: shipped defaults but app_requests_per_second=0 (each relay "
                         "keeps requests_per_second=200 for itself)",
                ScaleText(run) +
                    "; refused with 60007: " + FormatCount(static_cast<double>(run.im.app_limited)),
                "refused " + FormatFixed(refused_percent, 1) + "% of rows; drain " +
                    FormatRatio(run.seconds, floor_seconds) + " of rows/" +
                    std::to_string(kAppLimit) + " (" + FormatFixed(floor_seconds, 2) + " s)"});
  }
}

// 11m/11n: one relay against three on a backlog one room holds most of, the relays as shipped.
void AddHotRoomRows(const BenchContext& ctx, Report& report) {
  std::vector<ScaleRun> runs;
  for (const size_t relays : {size_t{1}, kMaxRelays}) {
    runs.push_back(RunRelays(ctx, ScaleSetup{relays, ctx.hot_scale_rows, std::nullopt, kAppLimit,
                                             true, ctx.hot_scale_room_rows}));
  }
  const std::string backlog = FormatCount(static_cast<double>(runs[0].rows)) + " rows, " +
                              FormatCount(static_cast<double>(ctx.hot_scale_room_rows)) +
                              " of them in one room (committed first), the rest over " +
                              std::to_string(ctx.scale_rooms) + " rooms";
  for (size_t i = 0; i < runs.size(); ++i) {
    const ScaleRun& run = runs[i];
    report.Add({i == 0 ? "11m" : "11n",
                std::to_string(run.relays) + (run.relays == 1 ? " relay" : " relays") +
                    " on one database, stub latency 20ms, the stub limits the app to " +
                    std::to_string(kAppLimit) + " calls/s (60007 beyond), " + backlog,
                "per relay: every key at its shipped default (room_min_interval=" +
                    ShippedRoomMinInterval() + ", app_requests_per_second=200 shared)",
                ScaleText(run) + "; drain " + FormatFixed(run.seconds, 1) + " s",
                i == 0 ? "the base"
                       : FormatRatio(run.seconds, runs[0].seconds) +
                             " the drain time of one relay (goal <= x1.1)"});
  }
}

}  // namespace

void RunScaleOut(const BenchContext& ctx, Report& report) {
  for (const std::optional<double> budget :
       {std::optional<double>(), std::optional<double>(kBudgetPerRelay)}) {
    std::vector<ScaleRun> runs;
    for (size_t relays = 1; relays <= kMaxRelays; ++relays) {
      runs.push_back(RunRelays(ctx, ScaleSetup{relays, ctx.scale_rows, budget, 0}));
    }
    AddRows(ctx, report, runs, budget ? "11d" : "11a", budget);
  }
  for (const bool shared : {true, false}) {
    std::vector<ScaleRun> limited;
    for (size_t relays = 1; relays <= kMaxRelays; ++relays) {
      limited.push_back(
          RunRelays(ctx, ScaleSetup{relays, ctx.app_limit_rows, std::nullopt, kAppLimit, shared}));
    }
    AddAppLimitRows(ctx, report, limited, shared ? "11g" : "11j", shared);
  }
  AddHotRoomRows(ctx, report);
  report.AddNote(
      "11: the relays are started together and timed from the first start until the database "
      "holds every row published; each relay is its own process with its own 16 requests in "
      "flight. 11a-11f: each relay with its own budget or none. 11g-11i: the relays as shipped "
      "(sharing the app's budget through the database), 11j-11l: each with its own 200/s, "
      "against a stub that refuses calls beyond the app limit with 60007 (a refused row is "
      "retried after poll_interval). The IM figures are the stub's counters: delivered = "
      "distinct events = rows means no row went out twice.");
}

}  // namespace room_outbox::bench
