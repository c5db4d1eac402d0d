// The SQL contract (docs/sql-contract.md) from a producer's side: rows written with plain SQL
// in the producer's own transactions, no hook involved (the envelope is literal JSON text, the
// times the server's clock), one wake-up datagram sent on a plain unix socket, and a real
// outbox-relay process that polls only every 30 s delivering every room's rows in insert order to
// the loopback IM stand-in, marking them as the contract says.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "support/fake_im_server.h"
#include "support/relay_process.h"
#include "support/test_database.h"
#include "support/test_rows.h"
#include "support/wait.h"

namespace room_outbox::testing {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using std::chrono::seconds;

// The relay polls every 30 s; rows woken by a datagram go out well within this.
constexpr milliseconds kWokenWithin{10000};

// The envelope exactly as docs/sql-contract.md writes it: literal JSON, not the project's codec.
std::string Envelope(const std::string& event_id, const std::string& type,
                     const std::string& room, int64_t seq, const std::string& command_id) {
  return "{\"event_id\":\"" + event_id + "\",\"event_type\":\"" + type + "\",\"room_id\":\"" +
         room + "\",\"room_seq\":" + std::to_string(seq) + ",\"command_id\":\"" + command_id +
         "\",\"request_id\":\"req-" + command_id +
         "\",\"node_id\":\"sql-producer\",\"occurred_at_ms\":1767225600000,"
         "\"payload\":{\"seq\":" +
         std::to_string(seq) + "}}";
}

// One datagram to the relay's wake socket, as any producer would send it (no hook code).
bool SendWakeUp(const std::string& path) {
  const int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  const char byte = 'w';
  const bool sent = ::sendto(fd, &byte, 1, MSG_DONTWAIT, reinterpret_cast<sockaddr*>(&addr),
                             sizeof(addr)) == 1;
  ::close(fd);
  return sent;
}

class SqlContractTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(fs::exists(RelayProcess::BinaryPath())) << RelayProcess::BinaryPath();
    ASSERT_TRUE(im_.running()) << im_.start_error();
    ASSERT_TRUE(db_.valid());
    char tmpl[] = "/tmp/sql-contract-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    wake_ = (dir_ / "wake.sock").string();
    db_.Exec("SET time_zone = '+00:00'");
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }

  // One command of the producer: its events for `room` in one transaction, as the contract
  // says (status pending, due now on the server's clock, the rest left to the defaults).
  void CommitCommand(const std::string& command_id, const std::string& room, int64_t seq,
                     const std::vector<std::pair<std::string, std::string>>& events) {
    db_.Exec("BEGIN");
    for (const auto& [event_id, type] : events) {
      db_.Exec(
          "INSERT INTO room_outbox (event_id, event_type, room_id, command_id, request_id, "
          "envelope, status, next_attempt_at_ms, created_at_ms, updated_at_ms) VALUES (" +
          SqlQuote(event_id) + ", " + SqlQuote(type) + ", " + SqlQuote(room) + ", " +
          SqlQuote(command_id) + ", " + SqlQuote("req-" + command_id) + ", " +
          SqlQuote(Envelope(event_id, type, room, seq, command_id)) + ", 'pending', " +
          kServerNowSql + ", " + kServerNowSql + ", " + kServerNowSql + ")");
    }
    db_.Exec("COMMIT");
  }

  int64_t Published(const std::string& like) {
    return db_.Scalar("SELECT COUNT(*) FROM room_outbox WHERE status = 'published' AND "
                      "event_id LIKE " + SqlQuote(like));
  }

  TestDatabase db_;
  FakeImServer im_;
  fs::path dir_;
  std::string wake_;
};

TEST_F(SqlContractTest, RowsWrittenWithPlainSqlAreDeliveredInRoomOrderOnAWakeUp) {
  RelayProcessOptions options;
  options.node_id = "sql-contract-test";
  options.outbox_worker = {{"poll_interval", "\"30s\""}};
  RelayProcess relay(db_, im_, options);
  std::ofstream(relay.config_path(), std::ios::app) << "\n[wake]\nsocket = \"" << wake_ << "\"\n";
  ASSERT_TRUE(relay.Start());
  ASSERT_TRUE(Eventually([&] { return fs::exists(wake_); }, seconds(30))) << relay.StderrTail();

  // A probe: once it is published the relay has run a round and idles for 30 s.
  CommitCommand("probe-cmd", "probe-room", 1, {{"probe-evt", "RoomGiftSent"}});
  ASSERT_TRUE(SendWakeUp(wake_));
  ASSERT_TRUE(Eventually([&] { return Published("probe-evt") == 1; }, seconds(40)))
      << relay.StderrTail();

  // Two rooms, three commands each, interleaved; one event type is never sent to IM.
  std::map<std::string, std::vector<std::string>> sent_order;
  for (int c = 1; c <= 3; ++c) {
    for (const std::string room : {"sqlc-room-a", "sqlc-room-b"}) {
      const std::string cmd = room + "-cmd" + std::to_string(c);
      CommitCommand(cmd, room, c,
                    {{cmd + "-join", "RoomUserJoined"},
                     {cmd + "-heat", "RoomHeatChanged"},
                     {cmd + "-gift", "RoomGiftSent"}});
      sent_order[room].push_back(cmd + "-join");
      sent_order[room].push_back(cmd + "-gift");
    }
  }
  ASSERT_TRUE(SendWakeUp(wake_));
  ASSERT_TRUE(Eventually([&] { return Published("sqlc-room-%") == 18; }, kWokenWithin))
      << "not all 18 rows published within " << kWokenWithin.count()
      << " ms of the wake-up (the relay polls every 30 s)\n"
      << relay.StderrTail();

  std::map<std::string, std::vector<std::string>> received;
  for (const FakeImRequest& request : im_.Requests()) {
    if (request.room_id.rfind("sqlc-room-", 0) == 0) {
      received[request.room_id].push_back(request.event_id);
      EXPECT_NE(request.event_type, "RoomHeatChanged") << "a type never sent was sent";
    }
  }
  EXPECT_EQ(received, sent_order) << "each room's events must arrive in insert order";
  // Marked as the contract says: published, never failed, no holder left.
  EXPECT_EQ(db_.Scalar("SELECT COUNT(*) FROM room_outbox WHERE event_id LIKE 'sqlc-room-%' AND "
                       "status = 'published' AND retry_count = 0 AND last_error IS NULL AND "
                       "claim_token IS NULL AND published_at_ms >= created_at_ms"),
            18);
  EXPECT_EQ(relay.Stop(seconds(30)).value_or(ProcessExit{}).exit_code, 0) << relay.StderrTail();
}

}  // namespace
}  // namespace room_outbox::testing
