// Benchmark 14: one claim poll beside a hot room (10k due rows, all committed before the other
// rooms' rows) vs the same 100 quiet rooms alone: the claim's time, the rows the server read for
// it, and how many quiet rooms each claim reached.
#include <string>
#include <vector>

#include "bench/bench_database.h"
#include "bench/benchmarks.h"
#include "store/mariadb_relay_store.h"

namespace room_outbox::bench {
namespace {

constexpr size_t kQuietRooms = 100;
constexpr size_t kHotRows = 10'000;
constexpr size_t kBatch = 100;
constexpr size_t kWarmup = 5;

// One row in each of kQuietRooms rooms, due after every hot row.
void AddQuietRooms(BenchDatabase& db) {
  db.Exec(
      "INSERT INTO room_outbox (event_id, event_type, room_id, command_id, envelope, status, "
      "next_attempt_at_ms, created_at_ms, updated_at_ms) "
      "SELECT CONCAT('quiet-e', seq), 'RoomGiftSent', CONCAT('room-quiet-', seq), "
      "CONCAT('quiet-c', seq), '{}', 'pending', 1000000 + seq, 0, 0 FROM seq_1_to_" +
      std::to_string(kQuietRooms));
}

void AddHotRoom(BenchDatabase& db) {
  db.Exec(
      "INSERT INTO room_outbox (event_id, event_type, room_id, command_id, envelope, status, "
      "next_attempt_at_ms, created_at_ms, updated_at_ms) "
      "SELECT CONCAT('hot-e', seq), 'RoomGiftSent', 'room-hot', CONCAT('hot-c', seq), '{}', "
      "'pending', seq, 0, 0 FROM seq_1_to_" +
      std::to_string(kHotRows));
}

struct Poll {
  double ms = 0;
  int64_t rows_read = 0;
  size_t quiet = 0;  // quiet rooms the claim reached
};

// One ClaimDue(per_room_order, limit kBatch), timed and counted, its rows given back untimed.
Poll OnePoll(relay::MariaDbRelayStore& store) {
  relay::ClaimOptions options;
  options.limit = kBatch;
  options.rooms.per_room_order = true;
  const int64_t before = Unwrap(store.RowsRead(), "RowsRead");
  const int64_t counter = Unwrap(store.RowsRead(), "RowsRead") - before;
  const int64_t start = before + counter;
  Stopwatch watch;
  relay::Claim claim = Unwrap(store.ClaimDue(options), "ClaimDue");
  Poll poll;
  poll.ms = watch.Millis();
  poll.rows_read = Unwrap(store.RowsRead(), "RowsRead") - start - counter;
  std::vector<int64_t> ids;
  for (const relay::OutboxRow& row : claim.rows) {
    ids.push_back(row.id);
    if (row.room_id != "room-hot") ++poll.quiet;
  }
  if (!ids.empty()) Unwrap(store.Release(claim.token, ids), "Release");
  return poll;
}

struct Medians {
  double ms = 0;
  double rows_read = 0;
  double quiet = 0;
};

Medians Summarise(const std::vector<Poll>& polls) {
  std::vector<double> ms;
  std::vector<double> rows;
  std::vector<double> quiet;
  for (const Poll& p : polls) {
    ms.push_back(p.ms);
    rows.push_back(static_cast<double>(p.rows_read));
    quiet.push_back(static_cast<double>(p.quiet));
  }
  return {Percentile(ms, 50), Percentile(rows, 50), Percentile(quiet, 0)};
}

}  // namespace

void RunHotRoomClaim(const BenchContext& ctx, Report& report) {
  BenchDatabase hot(ctx.socket, "bench_claim_hot");
  AddHotRoom(hot);
  AddQuietRooms(hot);
  hot.Exec("ANALYZE TABLE room_outbox");
  BenchDatabase alone(ctx.socket, "bench_claim_quiet");
  AddQuietRooms(alone);
  alone.Exec("ANALYZE TABLE room_outbox");
  auto hot_store = relay::MakeMariaDbRelayStore(hot.Options());
  auto alone_store = relay::MakeMariaDbRelayStore(alone.Options());
  Unwrap(hot_store->Connect(), "connecting the claim store");
  Unwrap(alone_store->Connect(), "connecting the claim store");
  std::vector<Poll> hot_polls;
  std::vector<Poll> alone_polls;
  for (size_t i = 0; i < kWarmup + ctx.claim_polls; ++i) {
    // Alternating, and alternating which goes first, so the machine's noise falls on both.
    const bool hot_first = i % 2 == 0;
    const Poll first = OnePoll(hot_first ? *hot_store : *alone_store);
    const Poll second = OnePoll(hot_first ? *alone_store : *hot_store);
    if (i < kWarmup) continue;
    hot_polls.push_back(hot_first ? first : second);
    alone_polls.push_back(hot_first ? second : first);
  }
  const Medians h = Summarise(hot_polls);
  const Medians a = Summarise(alone_polls);
  const std::string polls = "median of " + std::to_string(ctx.claim_polls) +
                            " ClaimDue(per_room_order, limit 100), alternating with the other "
                            "database; each claim released untimed";
  report.Add({"14a",
              "One claim poll, 100 quiet rooms (1 due row each) beside one room of " +
                  FormatCount(static_cast<double>(kHotRows)) + " due rows committed before them",
              polls, FormatFixed(h.ms, 2) + " ms", FormatRatio(h.ms, a.ms) + " vs 14b"});
  report.Add({"14b", "One claim poll, the 100 quiet rooms alone", polls,
              FormatFixed(a.ms, 2) + " ms", "x1"});
  report.Add({"14c", "Rows the server read per claim (Handler_read_*), 14a vs 14b",
              "median of the same polls; the counter query's own reads taken off",
              FormatFixed(h.rows_read, 0) + " vs " + FormatFixed(a.rows_read, 0),
              FormatRatio(h.rows_read, a.rows_read)});
  report.Add({"14d", "Quiet rooms reached by each claim beside the hot room (fewest of the polls)",
              "a batch of 100 for 101 due heads: the hot room's head and 99 quiet rooms",
              FormatFixed(h.quiet, 0) + " of 100", ""});
}

}  // namespace room_outbox::bench
