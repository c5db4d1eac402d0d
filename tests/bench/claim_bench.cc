// Benchmark 4: one claim poll's cost with a large published history vs without.
#include <string>
#include <vector>

#include "bench/bench_database.h"
#include "bench/benchmarks.h"
#include "mysql/mariadb_outbox_store.h"
#include "support/mysql_admin.h"

namespace room_outbox::bench {
namespace {

constexpr size_t kPendingRows = 100;
constexpr size_t kPendingRooms = 50;
constexpr size_t kHistoryRooms = 500;
constexpr size_t kWarmupPolls = 5;

// The median time (ms) of `polls` ClaimDue calls on `db`; each claim is given back (Release,
// untimed) so every poll sees the same 100 due rows.
double MedianClaimMs(BenchDatabase& db, size_t polls, bool per_room_order) {
  auto store = MakeMariaDbOutboxStore(db.Options());
  Unwrap(store->Connect(), "connecting the claim store");
  std::vector<double> samples;
  for (size_t i = 0; i < kWarmupPolls + polls; ++i) {
    ClaimOptions options;
    options.limit = 100;
    options.now_ms = NowMs();
    options.per_room_order = per_room_order;
    Stopwatch watch;
    Claim claim = Unwrap(store->ClaimDue(options), "ClaimDue");
    const double ms = watch.Millis();
    if (claim.rows.size() != kPendingRows) {
      throw BenchFailure("claim poll: expected " + std::to_string(kPendingRows) +
                         " rows, claimed " + std::to_string(claim.rows.size()));
    }
    std::vector<int64_t> ids;
    for (const OutboxRow& row : claim.rows) ids.push_back(row.id);
    Unwrap(store->Release(claim.token, ids, NowMs()), "Release");
    if (i >= kWarmupPolls) {
      samples.push_back(ms);
    }
  }
  return Percentile(samples, 50);
}

void AddPendingRows(BenchDatabase& db) {
  OutboxFill fill;
  fill.rows = kPendingRows;
  fill.rooms = kPendingRooms;
  fill.id_prefix = "due";
  fill.created_at_ms = NowMs();
  InsertPendingRows(db, fill);
}

// EXPLAIN output as aligned text columns.
std::string Explain(BenchDatabase& db, const std::string& sql) {
  auto rows = db.Query("EXPLAIN " + sql);
  const std::vector<std::string> header = {"id",  "select_type", "table", "type", "possible_keys",
                                           "key", "key_len",     "ref",   "rows", "Extra"};
  rows.insert(rows.begin(), header);
  std::vector<size_t> width(header.size(), 0);
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size() && i < width.size(); ++i) {
      width[i] = std::max(width[i], row[i].size());
    }
  }
  std::string out;
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size() && i < width.size(); ++i) {
      out += row[i] + std::string(width[i] - row[i].size() + 2, ' ');
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    out += "\n";
  }
  return out;
}

}  // namespace

void RunClaimPoll(const BenchContext& ctx, Report& report) {
  BenchDatabase history(ctx.socket, "bench_claim_history");
  const double history_seconds =
      InsertPublishedRowsFromSequence(history, ctx.published_rows, kHistoryRooms, NowMs() - 60000);
  AddPendingRows(history);
  history.Exec("ANALYZE TABLE room_outbox");
  BenchDatabase alone(ctx.socket, "bench_claim_alone");
  AddPendingRows(alone);
  alone.Exec("ANALYZE TABLE room_outbox");

  const double history_room = MedianClaimMs(history, ctx.claim_polls, true);
  const double alone_room = MedianClaimMs(alone, ctx.claim_polls, true);
  const double history_none = MedianClaimMs(history, ctx.claim_polls, false);
  const double alone_none = MedianClaimMs(alone, ctx.claim_polls, false);

  const std::string published = FormatCount(static_cast<double>(ctx.published_rows));
  const std::string polls = "median of " + std::to_string(ctx.claim_polls) +
                            " ClaimDue(limit 100) calls, each claim released untimed";
  const std::string pending = std::to_string(kPendingRows) + " pending rows over " +
                              std::to_string(kPendingRooms) + " rooms";
  report.Add({"4a", "One claim poll, per_room_order, " + published + " published + " + pending,
              polls, FormatFixed(history_room, 2) + " ms",
              FormatRatio(history_room, alone_room) + " vs 4b"});
  report.Add({"4b", "One claim poll, per_room_order, " + pending + " alone", polls,
              FormatFixed(alone_room, 2) + " ms", "x1"});
  report.Add({"4c", "One claim poll, ordering none, " + published + " published + " + pending,
              polls, FormatFixed(history_none, 2) + " ms",
              FormatRatio(history_none, alone_none) + " vs 4d"});
  report.Add({"4d", "One claim poll, ordering none, " + pending + " alone", polls,
              FormatFixed(alone_none, 2) + " ms", "x1"});
  report.AddNote("4: the " + published + " published rows were inserted with INSERT ... SELECT "
                 "FROM seq_1_to_" + std::to_string(ctx.published_rows) + " in " +
                 FormatFixed(history_seconds, 1) + " s, then ANALYZE TABLE.");

  const std::string now = std::to_string(NowMs());
  report.AddBlock("EXPLAIN of the per-room claim SELECT (kClaimDueRoomHeadsSql), " + published +
                      " published + " + pending,
                  Explain(history, testing::WithLiterals(kClaimDueRoomHeadsSql, {now, now, "100"})));
  report.AddBlock("EXPLAIN of the plain claim SELECT (kClaimDueSql), same state",
                  Explain(history, testing::WithLiterals(kClaimDueSql, {now, "100"})));
}

}  // namespace room_outbox::bench
