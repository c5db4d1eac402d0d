// Benchmark 12: the MySQL statement set beside the MariaDB set on the same server (the private
// MariaDB accepts both): the hook's Commit (sync publish off), the claim + mark ceiling, and the
// store's commit of rows leased to a sync publish. Each set on its own
// database; commands and claim batches alternate between the two, so load from elsewhere on the
// machine falls on both alike.
#include <array>
#include <memory>
#include <string>
#include <vector>

#include "bench/bench_database.h"
#include "bench/benchmarks.h"
#include "bench/commit_support.h"
#include "core/claim_token.h"
#include "store/mariadb_hook_store.h"
#include "store/mariadb_relay_store.h"

namespace room_outbox::bench {
namespace {

constexpr std::array<SqlDialect, 2> kSets = {SqlDialect::kMariaDb, SqlDialect::kMySql};

MysqlOptions WithSet(MysqlOptions options, SqlDialect set) {
  options.dialect = set;
  return options;
}

// What one set's pair of rows measured, side by side with the other set.
struct SetPair {
  std::array<std::vector<double>, 2> ms;
  std::vector<double> ratios;  // per command: MySQL set / MariaDB set
};

// Runs kWarmup + samples commands through commit(s, n) for each set s, the sets alternating
// command by command (neither always goes first), and keeps the timed ones.
template <typename CommitFn>
SetPair AlternateSets(size_t samples, CommitFn commit) {
  SetPair pair;
  for (size_t n = 0; n < kWarmup + samples; ++n) {
    std::array<double, 2> took{};
    for (size_t turn = 0; turn < kSets.size(); ++turn) {
      const size_t s = (n + turn) % kSets.size();
      took[s] = commit(s, n);
    }
    if (n >= kWarmup) {
      pair.ms[0].push_back(took[0]);
      pair.ms[1].push_back(took[1]);
      pair.ratios.push_back(took[0] > 0 ? took[1] / took[0] : 0);
    }
  }
  return pair;
}

void AddPair(Report& report, const SetPair& pair, const std::array<std::string, 2>& ids,
             const std::array<std::string, 2>& what, const std::string& settings) {
  const Latency mariadb = Summarize(pair.ms[0]);
  const Latency mysql = Summarize(pair.ms[1]);
  report.Add(
      {ids[0], what[0], settings + "; [mysql] dialect = \"mariadb\"", LatencyText(mariadb), "x1"});
  report.Add({ids[1], what[1], settings + "; [mysql] dialect = \"mysql\"", LatencyText(mysql),
              LatencyRatio(mysql, mariadb, ids[0]) + "; median of paired ratios x" +
                  FormatFixed(Percentile(pair.ratios, 50), 2)});
}

std::string SetName(size_t s) { return s == 0 ? "mariadb" : "mysql"; }

// 12a/12b: Hook::Commit (1 command + 3 events, sync publish off) through each set.
void CommitRows(const BenchContext& ctx, Report& report) {
  auto stub = StartStub(std::chrono::milliseconds(0));
  std::array<std::unique_ptr<BenchDatabase>, 2> dbs;
  std::array<std::unique_ptr<Hook>, 2> hooks;
  for (size_t s = 0; s < kSets.size(); ++s) {
    dbs[s] = std::make_unique<BenchDatabase>(ctx.socket, "bench_set_commit_" + SetName(s));
    hooks[s] = MakeBenchHook(WithSet(dbs[s]->Options(), kSets[s]), stub->ClientOptions(),
                             SyncPublishMode::kOff);
  }
  const SetPair pair = AlternateSets(ctx.commit_samples, [&](size_t s, size_t n) {
    const CommandWithEvents c = MakeCommand("set-" + SetName(s), n, "room-" + std::to_string(n), 1);
    Stopwatch watch;
    const CommitResult result = hooks[s]->Commit(c.command, c.events);
    const double ms = watch.Millis();
    if (result.status != CommitStatus::kCommitted) {
      throw BenchFailure("commit failed: " + result.error.message);
    }
    return ms;
  });
  AddPair(
      report, pair, {"12a", "12b"},
      {"Hook Commit, MariaDB set (RETURNING: 4 round trips)",
       "Hook Commit, MySQL set (plain INSERTs; unleased rows, nothing read back: 4 round trips)"},
      "1 command + 3 events, sync_publish off, a new room per command; the two sets alternate "
      "command by command, each on its own database");
}

// 12e/12f: the store's commit of rows leased to a sync publish (inline or background): a token,
// the sync lease and the per-room check, which the MySQL set reads back with the rows' ids.
void LeasedCommitRows(const BenchContext& ctx, Report& report) {
  std::array<std::unique_ptr<BenchDatabase>, 2> dbs;
  std::array<std::unique_ptr<internal::MariaDbHookStore>, 2> stores;
  for (size_t s = 0; s < kSets.size(); ++s) {
    dbs[s] = std::make_unique<BenchDatabase>(ctx.socket, "bench_set_leased_" + SetName(s));
    stores[s] = internal::MakeMariaDbHookStore(WithSet(dbs[s]->Options(), kSets[s]));
  }
  const SetPair pair = AlternateSets(ctx.commit_samples, [&](size_t s, size_t n) {
    const CommandWithEvents c =
        MakeCommand("leased-" + SetName(s), n, "room-" + std::to_string(n), 1);
    internal::CommitRequest request;
    request.command = c.command;
    request.token = core::NewClaimToken();
    request.sync_lease = std::chrono::milliseconds(800);
    request.check_earlier_pending = true;
    for (const Event& e : c.events) {
      request.rows.push_back(internal::NewOutboxRow{e.event_id, e.event_type, c.command.room_id,
                                                    c.command.command_id, c.command.request_id,
                                                    "{}", false});
    }
    Stopwatch watch;
    auto write = stores[s]->CommitCommand(request, {});
    const double ms = watch.Millis();
    if (!write || write->outcome != internal::CommitOutcome::kCommitted) {
      throw BenchFailure("leased commit failed: " +
                         (write ? std::string("not committed") : write.error().message));
    }
    return ms;
  });
  AddPair(report, pair, {"12e", "12f"},
          {"store commit of leased rows, MariaDB set (RETURNING: 4 round trips)",
           "store commit of leased rows, MySQL set (plain INSERTs + one read-back SELECT: 5 "
           "round trips)"},
          "1 command + 3 events leased to a new token for 800 ms, per-room check on (what the hook "
          "hands its store when its sync publish sends the rows), a new room per command; the two "
          "sets alternate command by command, each on its own database");
}

// 12c/12d: ClaimDue(per_room_order, limit 100) + MarkPublished over ctx.drain_rows rows per set.
void CeilingRows(const BenchContext& ctx, Report& report) {
  std::array<std::unique_ptr<BenchDatabase>, 2> dbs;
  std::array<std::unique_ptr<relay::MariaDbRelayStore>, 2> stores;
  for (size_t s = 0; s < kSets.size(); ++s) {
    const std::string name = s == 0 ? "bench_set_ceiling_mariadb" : "bench_set_ceiling_mysql";
    dbs[s] = std::make_unique<BenchDatabase>(ctx.socket, name);
    OutboxFill fill;
    fill.rows = ctx.drain_rows;
    fill.rooms = ctx.rooms;
    fill.id_prefix = name;
    fill.created_at_ms = NowMs();
    InsertPendingRows(*dbs[s], fill);
    stores[s] = relay::MakeMariaDbRelayStore(WithSet(dbs[s]->Options(), kSets[s]));
    Unwrap(stores[s]->Connect(), "connecting the ceiling store");
  }
  std::array<double, 2> seconds{};
  std::array<size_t, 2> published{};
  for (bool more = true; more;) {
    more = false;
    for (size_t s = 0; s < kSets.size(); ++s) {
      relay::ClaimOptions options;
      options.limit = 100;
      options.rooms.per_room_order = true;
      Stopwatch watch;
      relay::Claim claim = Unwrap(stores[s]->ClaimDue(options), "ClaimDue");
      std::vector<int64_t> ids;
      for (const relay::OutboxRow& row : claim.rows) ids.push_back(row.id);
      published[s] += Unwrap(stores[s]->MarkPublished(claim.token, ids, {}), "MarkPublished");
      seconds[s] += watch.Seconds();
      more = more || !claim.rows.empty();
    }
  }
  const std::string settings = "ClaimDue(per_room_order, limit 100) + MarkPublished, " +
                               FormatCount(static_cast<double>(ctx.drain_rows)) + " rows over " +
                               FormatCount(static_cast<double>(ctx.rooms)) +
                               " rooms per set; batches alternate between the sets";
  const double rate_mariadb = published[0] / seconds[0];
  const double rate_mysql = published[1] / seconds[1];
  report.Add({"12c", "Claim+mark ceiling, MariaDB set", settings + "; dialect = \"mariadb\"",
              FormatCount(rate_mariadb) + " rows/s", "x1"});
  report.Add({"12d", "Claim+mark ceiling, MySQL set", settings + "; dialect = \"mysql\"",
              FormatCount(rate_mysql) + " rows/s",
              FormatRatio(rate_mysql, rate_mariadb) + " vs 12c"});
}

}  // namespace

void RunDialectSets(const BenchContext& ctx, Report& report) {
  CommitRows(ctx, report);
  CeilingRows(ctx, report);
  LeasedCommitRows(ctx, report);
}

}  // namespace room_outbox::bench
