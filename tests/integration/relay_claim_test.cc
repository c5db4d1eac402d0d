// The claim under real outbox-relay processes (RelayProcess) on one test database:
//   - three relays drain a room of 2,000 rows whose head fails once plus 3,000 rows over 50
//     rooms: no deadlock or lock wait in any log, every event delivered once and in its room's
//     order, and the drain time printed beside one relay alone's;
//   - one relay whose wall clock runs 60 s ahead (libfaketime) beside a correct one: the
//     server's clock decides leases and due times, so no event is delivered twice and nothing
//     stalls.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "support/fake_im_server.h"
#include "support/relay_process.h"
#include "support/test_database.h"

namespace room_outbox::testing {
namespace {

using std::chrono::milliseconds;
using SteadyClock = std::chrono::steady_clock;

constexpr milliseconds kDrainTimeout{120'000};
constexpr milliseconds kStopTimeout{15'000};
constexpr char kBigRoom[] = "room-big";
constexpr char kLibFaketime[] = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1";

// Pending rows with valid envelopes, due at once, in one INSERT ... SELECT: `big_rows` rows of
// kBigRoom and `other_rows` over `other_rooms` rooms, interleaved in id order; each room's
// room_seq counts 1, 2, ... in id order. event_id = ev-<room>-<room_seq>.
void InsertBacklog(TestDatabase& db, int big_rows, int other_rows, int other_rooms) {
  const int total = big_rows + other_rows;
  // Row `seq` goes to the big room when it is one of the first big_rows of an even spread.
  const std::string room =
      "IF(FLOOR(seq * " + std::to_string(big_rows) + " / " + std::to_string(total) +
      ") > FLOOR((seq - 1) * " + std::to_string(big_rows) + " / " + std::to_string(total) +
      "), '" + kBigRoom + "', CONCAT('room-', LPAD(seq % " + std::to_string(other_rooms) +
      ", 3, '0')))";
  db.Exec(
      "INSERT INTO room_outbox (event_id, event_type, room_id, command_id, request_id, envelope, "
      "status, retry_count, next_attempt_at_ms, created_at_ms, updated_at_ms) "
      "SELECT CONCAT('ev-', room, '-', rs), 'RoomGiftSent', room, CONCAT('cmd-', seq), "
      "CONCAT('req-', seq), JSON_OBJECT('event_id', CONCAT('ev-', room, '-', rs), "
      "'event_type', 'RoomGiftSent', 'room_id', room, 'room_seq', rs, 'command_id', "
      "CONCAT('cmd-', seq), 'request_id', CONCAT('req-', seq), 'node_id', 'room-service-test', "
      "'occurred_at_ms', 0, 'payload', JSON_OBJECT('gift', 'rose')), 'pending', 0, 0, 0, 0 "
      "FROM (SELECT seq, room, ROW_NUMBER() OVER (PARTITION BY room ORDER BY seq) AS rs "
      "FROM (SELECT seq, " +
      room + " AS room FROM seq_1_to_" + std::to_string(total) +
      ") r) t ORDER BY seq");
}

bool WaitUntil(const std::function<bool()>& done, milliseconds timeout) {
  const auto deadline = SteadyClock::now() + timeout;
  while (!done()) {
    if (SteadyClock::now() >= deadline) return false;
    std::this_thread::sleep_for(milliseconds(20));
  }
  return true;
}

int64_t PendingRows(TestDatabase& db) {
  return db.Scalar("SELECT COUNT(*) FROM room_outbox WHERE status = 'pending'");
}

std::string Logs(const std::vector<std::unique_ptr<RelayProcess>>& relays) {
  std::string out;
  for (const auto& relay : relays) out += relay->StderrTail(25);
  return out;
}

void StopRelays(const std::vector<std::unique_ptr<RelayProcess>>& relays) {
  for (const auto& relay : relays) {
    if (relay->running()) {
      EXPECT_TRUE(relay->Signal(SIGTERM));
    }
  }
  for (const auto& relay : relays) {
    if (!relay->running()) continue;
    auto exit = relay->Wait(kStopTimeout);
    ASSERT_TRUE(exit) << relay->options().node_id << " did not stop\n" << relay->StderrTail();
    EXPECT_TRUE(exit->exited() && exit->exit_code == 0)
        << relay->options().node_id << ": " << Describe(*exit) << "\n"
        << relay->StderrTail();
  }
}

// Every event delivered exactly once, and each room's events delivered in room_seq order.
void ExpectEachEventOnceInRoomOrder(const FakeImServer& im, size_t rows) {
  const FakeImStats stats = im.Stats();
  EXPECT_EQ(stats.rejected, 0u);
  EXPECT_EQ(stats.unique_event_ids, rows);
  EXPECT_EQ(stats.duplicates, 0u);
  std::vector<FakeImRequest> requests = im.Requests();
  std::stable_sort(requests.begin(), requests.end(),
                   [](const FakeImRequest& a, const FakeImRequest& b) { return a.arrived < b.arrived; });
  std::map<std::string, int64_t> last_seq;
  size_t out_of_order = 0;
  for (const FakeImRequest& r : requests) {
    if (r.answer != FakeImFault::Kind::kOk) continue;
    int64_t& last = last_seq[r.room_id];
    if (r.room_seq != last + 1) ++out_of_order;
    last = r.room_seq;
  }
  EXPECT_EQ(out_of_order, 0u) << "deliveries that did not follow their room's previous one";
}

size_t LockErrorLines(const std::vector<std::unique_ptr<RelayProcess>>& relays) {
  size_t lines = 0;
  for (const auto& relay : relays) {
    lines += relay->CountLogLines({"Deadlock"}) + relay->CountLogLines({"Lock wait"});
  }
  return lines;
}

struct DrainOutcome {
  double seconds = 0;
  size_t lock_error_lines = 0;
  std::string shares;
};

// Drains the backlog (a head that fails once in the big room) with `count` relays.
DrainOutcome DrainWithRelays(int count) {
  constexpr int kBigRows = 2000;
  constexpr int kOtherRows = 3000;
  constexpr int kOtherRooms = 50;
  DrainOutcome outcome;
  FakeImServerOptions im_options;
  im_options.record_bodies = false;
  FakeImServer im(im_options);
  EXPECT_TRUE(im.running()) << im.start_error();
  TestDatabase db;
  EXPECT_TRUE(db.valid());
  InsertBacklog(db, kBigRows, kOtherRows, kOtherRooms);
  EXPECT_EQ(PendingRows(db), kBigRows + kOtherRows);
  im.PushFaultForEvent(std::string("ev-") + kBigRoom + "-1", FakeImFault::ImError(10002, "busy"));

  RelayProcessOptions options;
  options.outbox_worker = {{"batch_size", "100"}, {"max_in_flight", "16"}};
  options.log_level = "debug";
  std::vector<std::unique_ptr<RelayProcess>> relays;
  const auto start = SteadyClock::now();
  for (int i = 1; i <= count; ++i) {
    options.node_id = "relay-" + std::to_string(i);
    relays.push_back(std::make_unique<RelayProcess>(db, im, options));
    EXPECT_TRUE(relays.back()->Start());
  }
  const bool drained = WaitUntil([&] { return PendingRows(db) == 0; }, kDrainTimeout);
  outcome.seconds = std::chrono::duration<double>(SteadyClock::now() - start).count();
  EXPECT_TRUE(drained) << PendingRows(db) << " rows still pending\n" << Logs(relays);
  StopRelays(relays);
  ExpectEachEventOnceInRoomOrder(im, kBigRows + kOtherRows);
  EXPECT_EQ(im.RequestsFor(std::string("ev-") + kBigRoom + "-1").size(), 2u)
      << "the big room's head failed once, then went out";
  outcome.lock_error_lines = LockErrorLines(relays);
  for (const auto& relay : relays) {
    outcome.shares += " " + relay->options().node_id + "=" +
                      std::to_string(relay->CountLogLines({"outbox event published"}));
  }
  return outcome;
}

TEST(RelayClaimTest, ThreeRelaysDrainABlockedRoomAndFiftyOthersWithoutLockErrors) {
  const DrainOutcome one = DrainWithRelays(1);
  const DrainOutcome three = DrainWithRelays(3);
  EXPECT_EQ(one.lock_error_lines, 0u);
  EXPECT_EQ(three.lock_error_lines, 0u) << "Deadlock / Lock wait lines in the relays' logs";
  std::printf(
      "drain of 2000 rows of one room (head failing once) + 3000 rows over 50 rooms: "
      "1 relay %.2fs; 3 relays %.2fs (shares:%s)\n",
      one.seconds, three.seconds, three.shares.c_str());
}

// The wall-clock time in a relay's log line ("2026-12-01T08:30:00.123+0000 info ..."), as epoch
// seconds; 0 when the line has none.
int64_t LoggedEpochSeconds(const std::string& log) {
  std::tm tm{};
  if (log.size() < 19 || strptime(log.substr(0, 19).c_str(), "%Y-%m-%dT%H:%M:%S", &tm) == nullptr) {
    return 0;
  }
  return static_cast<int64_t>(timegm(&tm));
}

TEST(RelayClaimTest, ARelayWhoseClockRunsAMinuteAheadNeitherDuplicatesNorStalls) {
  if (access(kLibFaketime, R_OK) != 0) {
    GTEST_FAIL() << kLibFaketime << " is missing: install the Debian package faketime "
                 << "(scripts/deps.sh does)";
  }
  constexpr int kRows = 3000;
  FakeImServerOptions im_options;
  im_options.record_bodies = false;
  im_options.latency = milliseconds(2);  // so both relays hold rows in flight at once
  FakeImServer im(im_options);
  ASSERT_TRUE(im.running()) << im.start_error();
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  InsertBacklog(db, 0, kRows, 60);

  RelayProcessOptions options;
  // A short lease: a relay judging leases by its own clock, 60 s ahead, would see every lease
  // of the other relay as run out and send its rows again.
  options.outbox_worker = {{"batch_size", "20"}, {"max_in_flight", "8"}, {"lease", "\"10s\""}};
  options.log_level = "debug";
  options.node_id = "relay-correct";
  RelayProcess correct(db, im, options);
  options.node_id = "relay-ahead";
  options.env = {"FAKETIME=+60s", "FAKETIME_DONT_FAKE_MONOTONIC=1",
                 std::string("LD_PRELOAD=") + kLibFaketime};
  RelayProcess ahead(db, im, options);
  ASSERT_TRUE(correct.Start());
  ASSERT_TRUE(ahead.Start());
  const bool drained = WaitUntil([&] { return PendingRows(db) == 0; }, kDrainTimeout);
  ASSERT_TRUE(drained) << PendingRows(db) << " rows still pending\n"
                       << correct.StderrTail() << ahead.StderrTail();
  for (RelayProcess* relay : {&correct, &ahead}) {
    ASSERT_TRUE(relay->Signal(SIGTERM));
    auto exit = relay->Wait(kStopTimeout);
    ASSERT_TRUE(exit) << relay->StderrTail();
    EXPECT_TRUE(exit->exited() && exit->exit_code == 0) << Describe(*exit);
  }
  // The skew was in effect: the ahead relay's log says it is about a minute later than it is.
  const int64_t skew = LoggedEpochSeconds(ahead.Stderr()) - LoggedEpochSeconds(correct.Stderr());
  EXPECT_GE(skew, 50) << ahead.StderrTail(3) << correct.StderrTail(3);
  ExpectEachEventOnceInRoomOrder(im, kRows);
  EXPECT_EQ(im.Stats().requests, static_cast<size_t>(kRows)) << "no faults: one request per row";
  const size_t by_ahead = ahead.CountLogLines({"outbox event published"});
  const size_t by_correct = correct.CountLogLines({"outbox event published"});
  EXPECT_GT(by_ahead, 0u);
  EXPECT_GT(by_correct, 0u);
  std::printf("clock skew +60s: %zu rows by the relay ahead, %zu by the correct one\n", by_ahead,
              by_correct);
}

}  // namespace
}  // namespace room_outbox::testing
