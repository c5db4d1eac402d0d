// Overlapped rounds end to end: real outbox-relay processes, each claiming ahead on a second
// connection while its waves are sent (OutboxWorker, "Claim ahead"; room_min_interval 0), with
// transient IM faults, on one test MariaDB database and a FakeImServer on 127.0.0.1.
// Every event reaches IM exactly once, each room's events in commit order, and the relays did
// claim ahead (their round lines say so).
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/envelope_codec.h"
#include "store/mariadb_hook_store.h"
#include "support/delivery_checks.h"
#include "support/fake_im_server.h"
#include "support/relay_process.h"
#include "support/test_database.h"
#include "support/wait.h"

namespace room_outbox::testing {
namespace {

using std::chrono::milliseconds;

// Long enough for a loaded 2-core CI machine; a healthy run needs a fraction of each.
constexpr milliseconds kDrainTimeout{120'000};
constexpr milliseconds kStopTimeout{15'000};

std::string RoomId(int room) { return "room-" + std::to_string(1000 + room); }

// `rows_per_room` commands, each with the next event (room_seq 1, 2, ...) of every room: ids
// interleave the rooms, so every claim window holds many rooms.
void CommitBacklog(const TestDatabase& db, int rooms, int rows_per_room) {
  auto store = internal::MakeMariaDbHookStore(db.Options());
  for (int seq = 1; seq <= rows_per_room; ++seq) {
    internal::CommitRequest request;
    request.command.command_id = "cmd-" + std::to_string(seq);
    request.command.room_id = RoomId(0);
    request.command.command_type = "SendGift";
    request.command.request_id = "req-" + std::to_string(seq);
    request.command.room_seq = seq;
    for (int r = 0; r < rooms; ++r) {
      Envelope envelope;
      envelope.room_seq = seq;
      envelope.room_id = RoomId(r);
      envelope.event_id = "ev-" + envelope.room_id + "-" + std::to_string(seq);
      envelope.event_type = "RoomGiftSent";
      envelope.command_id = request.command.command_id;
      envelope.request_id = request.command.request_id;
      envelope.node_id = "room-service-test";
      envelope.occurred_at_ms = 1'700'000'000'000;
      envelope.payload = R"({"gift":"rose"})";
      auto json = core::EncodeEnvelope(envelope);
      ASSERT_TRUE(json) << json.error().message;
      internal::NewOutboxRow row;
      row.event_id = envelope.event_id;
      row.event_type = envelope.event_type;
      row.room_id = envelope.room_id;
      row.command_id = envelope.command_id;
      row.request_id = envelope.request_id;
      row.envelope = *json;
      request.rows.push_back(std::move(row));
    }
    auto write = store->CommitCommand(request, {});
    ASSERT_TRUE(write) << write.error().message;
  }
}

std::string Logs(const std::vector<std::unique_ptr<RelayProcess>>& relays) {
  std::string out;
  for (const auto& relay : relays) out += relay->StderrTail(25);
  return out;
}

TEST(RelayOverlapTest, RelaysClaimingAheadDeliverEachEventOnceAndEachRoomInOrder) {
  constexpr int kRooms = 150;
  constexpr int kRowsPerRoom = 8;
  constexpr int64_t kRows = kRooms * kRowsPerRoom;
  FakeImServerOptions im_options;
  im_options.record_bodies = false;
  im_options.latency = milliseconds(3);  // a wave takes a moment, so claims overlap it
  FakeImServer im(im_options);
  ASSERT_TRUE(im.running()) << im.start_error();
  auto faults = std::make_shared<TransientFaults>(5);
  im.SetFaultFunction([faults](const FakeImRequest& r) { return (*faults)(r); });
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  ASSERT_NO_FATAL_FAILURE(CommitBacklog(db, kRooms, kRowsPerRoom));

  // Small full batches (every claim is followed by another, claimed ahead; a relay claims ahead
  // only without room_min_interval), debug round lines.
  RelayProcessOptions options;
  options.outbox_worker = {
      {"batch_size", "30"}, {"max_in_flight", "8"}, {"room_min_interval", "\"0ms\""}};
  options.log_level = "debug";
  std::vector<std::unique_ptr<RelayProcess>> relays;
  for (int i = 1; i <= 3; ++i) {
    options.node_id = "relay-" + std::to_string(i);
    relays.push_back(std::make_unique<RelayProcess>(db, im, options));
    ASSERT_TRUE(relays.back()->Start()) << options.node_id;
  }
  const bool drained = Eventually(
      [&] { return db.Scalar("SELECT COUNT(*) FROM room_outbox WHERE status = 'pending'") == 0; },
      kDrainTimeout);
  ASSERT_TRUE(drained) << Logs(relays);
  for (const auto& relay : relays) ASSERT_TRUE(relay->Signal(SIGTERM));
  for (const auto& relay : relays) {
    auto exit = relay->Wait(kStopTimeout);
    ASSERT_TRUE(exit) << relay->options().node_id << " did not stop\n" << relay->StderrTail();
    EXPECT_TRUE(exit->exited() && exit->exit_code == 0) << Describe(*exit);
  }

  const FakeImStats stats = im.Stats();
  EXPECT_EQ(stats.rejected, 0u);
  EXPECT_EQ(stats.unique_event_ids, static_cast<size_t>(kRows));
  EXPECT_EQ(stats.duplicates, 0u);
  EXPECT_GE(faults->faulted(), static_cast<size_t>(kRows / 50)) << "faults were injected";
  EXPECT_EQ(db.Scalar("SELECT COUNT(*) FROM room_outbox WHERE status = 'published'"), kRows);

  // Per room, in arrival order: no attempt of a later row before an earlier one, and the
  // delivered rows are exactly 1..kRowsPerRoom.
  std::vector<FakeImRequest> requests = im.Requests();
  std::stable_sort(
      requests.begin(), requests.end(),
      [](const FakeImRequest& a, const FakeImRequest& b) { return a.arrived < b.arrived; });
  std::map<std::string, int64_t> last_attempted;
  for (const FakeImRequest& r : requests) {
    int64_t& last = last_attempted[r.room_id];
    EXPECT_GE(r.room_seq, last) << r.room_id << ": " << r.event_id << " sent after seq " << last;
    last = r.room_seq;
  }
  std::vector<int64_t> expected(kRowsPerRoom);
  for (int i = 0; i < kRowsPerRoom; ++i) expected[i] = i + 1;
  auto delivered = DeliveredByRoom(im);
  ASSERT_EQ(delivered.size(), static_cast<size_t>(kRooms));
  for (const auto& [room, list] : delivered) {
    std::vector<int64_t> seqs;
    for (const FakeImRequest& r : list) seqs.push_back(r.room_seq);
    EXPECT_EQ(seqs, expected) << room;
  }

  // Not vacuous: the relays' rounds did take claims made ahead.
  size_t ahead = 0;
  for (const auto& relay : relays) {
    ahead += relay->CountLogLines({"outbox round", "claimed_ahead=true"});
  }
  EXPECT_GT(ahead, 0u) << Logs(relays);
}

}  // namespace
}  // namespace room_outbox::testing
