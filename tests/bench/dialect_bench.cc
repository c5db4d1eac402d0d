// Benchmark 12: the MySQL statement set beside the MariaDB set on the same server (the private
// MariaDB accepts both): the hook's Commit, and the claim + mark ceiling. Each set on its own
// database; commands and claim batches alternate between the two, so load from elsewhere on the
// machine falls on both alike.
#include <array>
#include <memory>
#include <string>
#include <vector>

#include "bench/bench_database.h"
#include "bench/benchmarks.h"
#include "bench/commit_support.h"
#include "store/mariadb_relay_store.h"

namespace room_outbox::bench {
namespace {

constexpr std::array<SqlDialect, 2> kSets = {SqlDialect::kMariaDb, SqlDialect::kMySql};

MysqlOptions WithSet(MysqlOptions options, SqlDialect set) {
  options.dialect = set;
  return options;
}

// 12a/12b: Hook::Commit (1 command + 3 events, sync publish off) through each set.
void CommitRows(const BenchContext& ctx, Report& report) {
  auto stub = StartStub(std::chrono::milliseconds(0));
  std::array<std::unique_ptr<BenchDatabase>, 2> dbs = {
      std::make_unique<BenchDatabase>(ctx.socket, "bench_set_commit_mariadb"),
      std::make_unique<BenchDatabase>(ctx.socket, "bench_set_commit_mysql")};
  std::array<std::unique_ptr<Hook>, 2> hooks;
  for (size_t s = 0; s < kSets.size(); ++s) {
    hooks[s] = MakeBenchHook(WithSet(dbs[s]->Options(), kSets[s]), stub->ClientOptions(),
                             SyncPublishMode::kOff);
  }
  std::array<std::vector<double>, 2> ms;
  std::vector<double> ratios;
  for (size_t n = 0; n < kWarmup + ctx.commit_samples; ++n) {
    std::array<double, 2> took{};
    for (size_t turn = 0; turn < kSets.size(); ++turn) {
      const size_t s = (n + turn) % kSets.size();  // neither set always goes first
      const CommandWithEvents c =
          MakeCommand(s == 0 ? "set-mariadb" : "set-mysql", n, "room-" + std::to_string(n), 1);
      Stopwatch watch;
      const CommitResult result = hooks[s]->Commit(c.command, c.events);
      took[s] = watch.Millis();
      if (result.status != CommitStatus::kCommitted) {
        throw BenchFailure("commit failed: " + result.error.message);
      }
    }
    if (n >= kWarmup) {
      ms[0].push_back(took[0]);
      ms[1].push_back(took[1]);
      ratios.push_back(took[0] > 0 ? took[1] / took[0] : 0);
    }
  }
  const Latency mariadb = Summarize(ms[0]);
  const Latency mysql = Summarize(ms[1]);
  const std::string settings =
      "1 command + 3 events, sync_publish off, a new room per command; the two sets alternate "
      "command by command, each on its own database";
  report.Add({"12a", "Hook Commit, MariaDB set (RETURNING: 4 round trips)",
              settings + "; [mysql] dialect = \"mariadb\"", LatencyText(mariadb), "x1"});
  report.Add({"12b", "Hook Commit, MySQL set (plain INSERTs + one read-back SELECT: 5 round trips)",
              settings + "; [mysql] dialect = \"mysql\"", LatencyText(mysql),
              LatencyRatio(mysql, mariadb, "12a") + "; median of paired ratios x" +
                  FormatFixed(Percentile(ratios, 50), 2)});
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
      published[s] += Unwrap(stores[s]->MarkPublished(claim.token, ids), "MarkPublished");
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
}

}  // namespace room_outbox::bench
