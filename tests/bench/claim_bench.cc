// Benchmark 4: one claim poll's cost with a large published history vs without.
// Benchmark 8: one claim poll's cost beside a room of 100k pending rows behind a failing head.
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_database.h"
#include "bench/benchmarks.h"
#include "core/mysql/outbox_sql.h"
#include "store/mariadb_relay_store.h"
#include "support/mysql_admin.h"

namespace room_outbox::bench {
namespace {

constexpr size_t kPendingRows = 100;
constexpr size_t kPendingRooms = 50;
constexpr size_t kHistoryRooms = 500;
constexpr size_t kWarmupPolls = 5;

// One claim poll on `store`: ClaimDue(limit 100) timed, then the claim given back (Release,
// untimed) so every poll sees the same 100 due rows. Returns the milliseconds of the claim.
double TimedClaimMs(relay::RelayStore& store, bool per_room_order) {
  relay::ClaimOptions options;
  options.limit = 100;
  options.rooms.per_room_order = per_room_order;
  Stopwatch watch;
  relay::Claim claim = Unwrap(store.ClaimDue(options), "ClaimDue");
  const double ms = watch.Millis();
  if (claim.rows.size() != kPendingRows) {
    throw BenchFailure("claim poll: expected " + std::to_string(kPendingRows) + " rows, claimed " +
                       std::to_string(claim.rows.size()));
  }
  std::vector<int64_t> ids;
  for (const relay::OutboxRow& row : claim.rows) ids.push_back(row.id);
  Unwrap(store.Release(claim.token, ids), "Release");
  return ms;
}

int64_t GlobalStatus(BenchDatabase& db, const std::string& name) {
  auto rows = db.Query("SHOW GLOBAL STATUS LIKE " + db.Quote(name));
  if (rows.empty() || rows[0].size() < 2) {
    throw BenchFailure("SHOW GLOBAL STATUS has no " + name);
  }
  return std::stoll(rows[0][1]);
}

// Waits (up to 1 s) until InnoDB's purge has caught up: at most a few transactions' undo left,
// so the index entries earlier polls' lease and release left behind are gone.
void WaitForPurge(BenchDatabase& db) {
  Stopwatch watch;
  while (watch.Seconds() < 1.0 && GlobalStatus(db, "Innodb_history_list_length") > 4) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

struct PairedMedians {
  double history_ms = 0;
  double alone_ms = 0;
};

// The median claim time on each database, the polls alternating between the two so that
// anything else the server or the machine does falls on both alike.
// With `after_purge`, each timed poll waits for purge first (a relay polling at its interval);
// without, the polls run back to back (a relay draining a backlog).
PairedMedians MedianClaimMs(BenchDatabase& history, BenchDatabase& alone, size_t polls,
                            bool per_room_order, bool after_purge) {
  auto history_store = relay::MakeMariaDbRelayStore(history.Options());
  auto alone_store = relay::MakeMariaDbRelayStore(alone.Options());
  Unwrap(history_store->Connect(), "connecting the claim store");
  Unwrap(alone_store->Connect(), "connecting the claim store");
  std::vector<double> history_samples;
  std::vector<double> alone_samples;
  for (size_t i = 0; i < kWarmupPolls + polls; ++i) {
    // Alternate which one goes first as well.
    const bool history_first = i % 2 == 0;
    if (after_purge) WaitForPurge(history);
    const double first =
        TimedClaimMs(history_first ? *history_store : *alone_store, per_room_order);
    if (after_purge) WaitForPurge(history);
    const double second =
        TimedClaimMs(history_first ? *alone_store : *history_store, per_room_order);
    if (i < kWarmupPolls) continue;
    history_samples.push_back(history_first ? first : second);
    alone_samples.push_back(history_first ? second : first);
  }
  return {Percentile(history_samples, 50), Percentile(alone_samples, 50)};
}

// Waits (up to `limit`) until InnoDB has written back the pages the history insert dirtied and
// purged its undo log, so the timed polls do not share the server with that background work.
// Returns the seconds waited.
double WaitForQuietServer(BenchDatabase& db, std::chrono::seconds limit) {
  Stopwatch watch;
  db.Exec("SET GLOBAL innodb_max_dirty_pages_pct_lwm = 0.001");
  while (watch.Seconds() < static_cast<double>(limit.count())) {
    const int64_t dirty = GlobalStatus(db, "Innodb_buffer_pool_pages_dirty");
    const int64_t history_len = GlobalStatus(db, "Innodb_history_list_length");
    if (dirty < 100 && history_len < 100) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  db.Exec("SET GLOBAL innodb_max_dirty_pages_pct_lwm = DEFAULT");
  return watch.Seconds();
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

  const double quiet_seconds = WaitForQuietServer(history, std::chrono::seconds(120));

  const PairedMedians room = MedianClaimMs(history, alone, ctx.claim_polls, true, true);
  const PairedMedians room_busy = MedianClaimMs(history, alone, ctx.claim_polls, true, false);
  const PairedMedians none = MedianClaimMs(history, alone, ctx.claim_polls, false, true);

  const std::string published = FormatCount(static_cast<double>(ctx.published_rows));
  const std::string polls = "median of " + std::to_string(ctx.claim_polls) +
                            " ClaimDue(limit 100), alternating with the other database; each "
                            "claim released untimed";
  const std::string pending = std::to_string(kPendingRows) + " pending rows over " +
                              std::to_string(kPendingRooms) + " rooms";
  const std::string after_purge = ", each poll after purge caught up";
  const std::string back_to_back = ", polls back to back";
  auto add_pair = [&](const std::string& first_id, const std::string& second_id,
                      const std::string& what, const std::string& how, const PairedMedians& m) {
    report.Add({first_id, "One claim poll, " + what + ", " + published + " published + " + pending,
                polls + how, FormatFixed(m.history_ms, 2) + " ms",
                FormatRatio(m.history_ms, m.alone_ms) + " vs " + second_id});
    report.Add({second_id, "One claim poll, " + what + ", " + pending + " alone", polls + how,
                FormatFixed(m.alone_ms, 2) + " ms", "x1"});
  };
  add_pair("4a", "4b", "per_room_order", after_purge, room);
  add_pair("4c", "4d", "per_room_order", back_to_back, room_busy);
  add_pair("4e", "4f", "ordering none", after_purge, none);
  report.AddNote("4: the " + published +
                 " published rows were inserted with INSERT ... SELECT "
                 "FROM seq_1_to_" +
                 std::to_string(ctx.published_rows) + " in " + FormatFixed(history_seconds, 1) +
                 " s, then ANALYZE TABLE; the polls began after InnoDB "
                 "had flushed the dirty pages and purged the undo log (" +
                 FormatFixed(quiet_seconds, 1) +
                 " s). Each poll's lease and release rewrite "
                 "next_attempt_at_ms, leaving index entries in idx_pending_due until purge removes "
                 "them; back-to-back polls (4c) walk those, a 100-row table alone is read by a "
                 "full scan that never meets them.");

  const std::string now = std::to_string(NowMs());
  report.AddBlock("EXPLAIN of the claim's window SELECT (sql::kClaimWindow), " + published +
                      " published + " + pending,
                  Explain(history, testing::WithLiterals(core::sql::kClaimWindow, {now, "100"})));
  report.AddBlock(
      "EXPLAIN of one part of the room prefix read (sql::kRoomPrefixPart), same state",
      Explain(history, testing::WithLiterals(core::sql::kRoomPrefixPart, {"'room-1'", "3"})));
}

namespace {

constexpr size_t kBlockedRows = 100'000;

// A room whose head failed and waits an hour for its retry, with kBlockedRows due rows behind
// it that sort before every other pending row (the worst case for a walk in due order).
double AddBlockedRoom(BenchDatabase& db) {
  Stopwatch watch;
  db.Exec(
      "INSERT INTO room_outbox (event_id, event_type, room_id, command_id, envelope, status, "
      "retry_count, last_error, next_attempt_at_ms, created_at_ms, updated_at_ms) VALUES "
      "('blocked-head', 'RoomGiftSent', 'room-blocked', 'blocked-c0', '{}', 'pending', 7, "
      "'permanent: group not found', CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED) + 3600000, "
      "0, 0)");
  db.Exec(
      "INSERT INTO room_outbox (event_id, event_type, room_id, command_id, envelope, status, "
      "next_attempt_at_ms, created_at_ms, updated_at_ms) "
      "SELECT CONCAT('blocked-e', seq), 'RoomGiftSent', 'room-blocked', CONCAT('blocked-c', seq), "
      "'{}', 'pending', CAST(seq AS SIGNED) - 1000000, 0, 0 FROM seq_1_to_" +
      std::to_string(kBlockedRows));
  return watch.Seconds();
}

struct FirstContact {
  size_t claims = 0;
  double seconds = 0;
};

// Claims (released at once) until one reaches the quiet rooms. The claim starts from the due
// heads, so the first does: the blocked room's head waits, and none of its rows is read.
FirstContact ReachOtherRooms(BenchDatabase& db) {
  auto store = relay::MakeMariaDbRelayStore(db.Options());
  Unwrap(store->Connect(), "connecting the claim store");
  FirstContact contact;
  Stopwatch watch;
  while (contact.claims < 2 * kBlockedRows / 100) {
    relay::ClaimOptions options;
    options.limit = 100;
    relay::Claim claim = Unwrap(store->ClaimDue(options), "ClaimDue");
    ++contact.claims;
    if (claim.rows.empty()) continue;
    std::vector<int64_t> ids;
    for (const relay::OutboxRow& row : claim.rows) ids.push_back(row.id);
    Unwrap(store->Release(claim.token, ids), "Release");
    break;
  }
  contact.seconds = watch.Seconds();
  return contact;
}

}  // namespace

void RunBlockedRoomClaim(const BenchContext& ctx, Report& report) {
  BenchDatabase blocked(ctx.socket, "bench_claim_blocked");
  const double insert_seconds = AddBlockedRoom(blocked);
  AddPendingRows(blocked);
  blocked.Exec("ANALYZE TABLE room_outbox");
  BenchDatabase alone(ctx.socket, "bench_claim_unblocked");
  AddPendingRows(alone);
  alone.Exec("ANALYZE TABLE room_outbox");
  WaitForQuietServer(blocked, std::chrono::seconds(60));

  const FirstContact contact = ReachOtherRooms(blocked);
  // The inserts' undo and the first claim's lease and release are purged before the steady state
  // is measured.
  const double purge_seconds = WaitForQuietServer(blocked, std::chrono::seconds(120));
  const PairedMedians m = MedianClaimMs(blocked, alone, ctx.claim_polls, true, false);
  const PairedMedians quiet = MedianClaimMs(blocked, alone, ctx.claim_polls, true, true);
  const std::string pending = std::to_string(kPendingRows) + " pending rows over " +
                              std::to_string(kPendingRooms) + " rooms";
  const std::string blocked_text = FormatCount(static_cast<double>(kBlockedRows)) +
                                   " pending rows of one room behind a failing head";
  const std::string polls = "median of " + std::to_string(ctx.claim_polls) +
                            " ClaimDue(per_room_order, limit 100), back to back, alternating "
                            "with the other database; each claim released untimed";
  report.Add({"8a", "One claim poll for other rooms beside " + blocked_text + " + " + pending,
              polls, FormatFixed(m.history_ms, 2) + " ms",
              FormatRatio(m.history_ms, m.alone_ms) + " vs 8b"});
  report.Add({"8b", "One claim poll, " + pending + " alone", polls,
              FormatFixed(m.alone_ms, 2) + " ms", "x1"});
  report.Add({"8a'", "The same, each poll after purge caught up (a relay polling at its interval)",
              "median of " + std::to_string(ctx.claim_polls) +
                  " ClaimDue(per_room_order, limit 100), each after purge caught up, alternating "
                  "with the other database; each claim released untimed",
              FormatFixed(quiet.history_ms, 2) + " ms",
              FormatRatio(quiet.history_ms, quiet.alone_ms) + " vs 8b' (" +
                  FormatFixed(quiet.alone_ms, 2) + " ms)"});
  report.Add({"8c", "First contact: claims until one reaches the other rooms",
              "ClaimDue(limit 100) until one returns the other rooms' rows",
              std::to_string(contact.claims) + " claims, " + FormatFixed(contact.seconds, 1) + " s",
              ""});
  report.AddNote("8: the blocked room (" + FormatCount(static_cast<double>(kBlockedRows)) +
                 " rows, INSERT ... SELECT FROM seq_1_to_N in " + FormatFixed(insert_seconds, 1) +
                 " s) has every row due before the other rooms' rows; its head retries in an hour. "
                 "The claim starts from the rooms whose head is due (kDueHeads, a loose scan of "
                 "idx_room_status), so it never reads the blocked room's rows and leaves their "
                 "times as they are; 8a' is measured once purge had caught up (" +
                 FormatFixed(purge_seconds, 1) +
                 " s). Back to back (8a), each poll's own lease "
                 "and release leave old index entries until purge removes them; the 100-row table "
                 "alone (8b) is read by a full scan that never meets them (as in 4c).");
}

}  // namespace room_outbox::bench
