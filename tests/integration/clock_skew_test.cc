// The hook on a host whose wall clock is wrong: room-sim (a real process) runs under libfaketime
// (FAKETIME_DONT_FAKE_MONOTONIC=1, so only the wall clock moves) 10 s behind and 10 minutes
// ahead, against an IM that fails every sync publish, beside a correct outbox-relay. Every time
// the commit stores is the database server's, so every event is delivered, none twice, each room
// in order, the relay never takes a row while the hook's sync publish holds it (a host behind
// would otherwise write leases that have already ended), and nothing waits for the skewed clock
// to come round (a host ahead would otherwise hide its rows from the relay: a stall).
#include <glob.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>

#include "core/mysql/outbox_sql.h"
#include "support/fake_im_server.h"
#include "support/relay_process.h"
#include "support/test_database.h"
#include "support/wait.h"

namespace room_outbox::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// libfaketime as the Debian package `faketime` installs it (dpkg -L libfaketime).
std::string LibFaketimePath() {
  glob_t found{};
  std::string path;
  if (glob("/usr/lib/*/faketime/libfaketime.so.1", 0, nullptr, &found) == 0 && found.gl_pathc > 0) {
    path = found.gl_pathv[0];
  }
  globfree(&found);
  return path;
}

constexpr milliseconds kSyncTryLatency{150};

FakeImServerOptions SlowOptions() {
  FakeImServerOptions options;
  options.latency = kSyncTryLatency;
  return options;
}

class ClockSkewTest : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    ASSERT_TRUE(db_.valid());
    ASSERT_TRUE(sim_im_.running()) << sim_im_.start_error();
    ASSERT_TRUE(relay_im_.running()) << relay_im_.start_error();
    sim_im_.SetMode("down");  // every sync publish fails: the relay delivers everything
    faketime_ = LibFaketimePath();
    ASSERT_FALSE(faketime_.empty()) << "libfaketime not found: install the Debian package "
                                       "faketime (scripts/deps.sh does)";
    std::ifstream in(std::string(ROOM_OUTBOX_SOURCE_DIR) + "/sim/room_snapshot.sql");
    std::stringstream sql;
    sql << in.rdbuf();
    db_.Exec(sql.str());
    dir_ = std::filesystem::temp_directory_path() / ("clock-skew-test-" + db_.name());
    std::filesystem::create_directories(dir_);
    std::ofstream(dir_ / "tim-secret-key") << sim_im_.options().secret_key;
    std::ofstream config(dir_ / "sim.toml");
    config << "node_id = \"sim-skewed\"\n"
           << "[mysql]\nsocket = \"" << db_.Options().socket << "\"\nuser = \"root\"\n"
           << "database = \"" << db_.name() << "\"\n"
           << "dialect = \"" << SqlDialectName(db_.Options().dialect) << "\"\n"
           << "[tencent_im]\nendpoint = \"" << sim_im_.endpoint() << "\"\n"
           << "sdk_app_id = " << sim_im_.options().sdk_app_id << "\n"
           << "admin_identifier = \"" << sim_im_.options().identifier << "\"\n"
           << "secret_key_file = \"tim-secret-key\"\nrequests_per_second = 0\n"
           << "[hook]\nsync_publish_timeout = \"300ms\"\n";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Runs room-sim with its wall clock moved by `offset` (libfaketime syntax, e.g. "-10s").
  nlohmann::json RunSkewedSim(const std::string& offset, const std::string& args) {
    const std::string command = "env LD_PRELOAD=" + faketime_ + " FAKETIME=" + offset +
                                " FAKETIME_DONT_FAKE_MONOTONIC=1 " +
                                std::string(ROOM_OUTBOX_BINARY_DIR) + "/room-sim --config " +
                                (dir_ / "sim.toml").string() + " " + args + " 2>/dev/null";
    std::string out;
    FILE* pipe = popen(command.c_str(), "r");
    if (pipe == nullptr) {
      ADD_FAILURE() << "popen failed: " << command;
      return {};
    }
    char buf[4096];
    while (size_t n = fread(buf, 1, sizeof buf, pipe)) {
      out.append(buf, n);
    }
    const int status = pclose(pipe);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << command << "\n" << out;
    auto summary = nlohmann::json::parse(out, nullptr, false);
    EXPECT_FALSE(summary.is_discarded()) << "not one JSON line: " << out;
    return summary;
  }

  int64_t ServerNowMs() { return db_.Scalar("SELECT " + std::string(core::sql::kServerNowMs)); }

  TestDatabase db_;
  // What the skewed hook host publishes to: always failing, after a while, so that a relay
  // taking rows the sync publish still holds would be caught sending them first.
  FakeImServer sim_im_{SlowOptions()};
  FakeImServer relay_im_;  // what the correct relay publishes to
  std::string faketime_;
  std::filesystem::path dir_;
};

TEST_P(ClockSkewTest, SkewedHookHostDeliversEveryEventOnceInOrderWithoutStall) {
  RelayProcessOptions relay_options;
  relay_options.outbox_worker["poll_interval"] = "\"100ms\"";
  RelayProcess relay(db_, relay_im_, relay_options);
  ASSERT_TRUE(relay.Start());

  const int64_t before = ServerNowMs();
  nlohmann::json summary = RunSkewedSim(GetParam(), "--rooms 4 --commands 60 --seed 11");
  const int64_t after = ServerNowMs();
  ASSERT_TRUE(summary.is_object());
  ASSERT_EQ(summary["commands"], 60);
  EXPECT_EQ(summary["failed"], 0);
  EXPECT_EQ(summary["unknown"], 0);
  EXPECT_EQ(summary["sync_published"], 0);
  const auto im_events = summary["im_events"].get<size_t>();
  ASSERT_GT(im_events, 0u);
  EXPECT_EQ(summary["left_pending"].get<size_t>(), im_events);

  // What the commit stored is the server's time, not the skewed host's.
  EXPECT_GE(db_.Scalar("SELECT MIN(created_at_ms) FROM room_outbox"), before);
  EXPECT_LE(db_.Scalar("SELECT MAX(created_at_ms) FROM room_outbox"), after);
  EXPECT_GE(db_.Scalar("SELECT MIN(created_at_ms) FROM room_command_log"), before);
  EXPECT_LE(db_.Scalar("SELECT MAX(created_at_ms) FROM room_command_log"), after);
  EXPECT_LE(db_.Scalar("SELECT MAX(published_at_ms) FROM room_outbox WHERE event_type IN "
                       "('RoomCreated', 'RoomHeatChanged', 'RoomRankChanged')"),
            after);

  // Every event reaches IM through the relay, well before a 10-minute skew could come round.
  EXPECT_TRUE(Eventually(
      [&] { return db_.Scalar("SELECT COUNT(*) FROM room_outbox WHERE status = 'pending'") == 0; },
      seconds(60)))
      << db_.Scalar("SELECT COUNT(*) FROM room_outbox WHERE status = 'pending'")
      << " rows still pending\n"
      << relay.StderrTail();
  ASSERT_TRUE(relay.Stop(seconds(10)).has_value());

  const FakeImStats stats = relay_im_.Stats();
  EXPECT_EQ(stats.unique_event_ids, im_events);
  EXPECT_EQ(stats.duplicates, 0u);
  EXPECT_EQ(stats.delivered, im_events);
  // The sync lease held: the relay sent no row before the hook's sync attempt of it had been
  // answered (the failing IM answers kSyncTryLatency after the request arrived).
  for (const FakeImRequest& sync_try : sim_im_.Requests()) {
    for (const FakeImRequest& sent : relay_im_.RequestsFor(sync_try.event_id)) {
      EXPECT_GE(sent.arrived, sync_try.arrived + kSyncTryLatency) << sync_try.event_id;
    }
  }
  std::map<std::string, int64_t> last_seq;
  for (const FakeImRequest& request : relay_im_.Requests()) {
    EXPECT_GE(request.room_seq, last_seq[request.room_id]) << request.event_id;
    last_seq[request.room_id] = request.room_seq;
  }
}

INSTANTIATE_TEST_SUITE_P(HookHostClock, ClockSkewTest, ::testing::Values("-10s", "+10m"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           return std::string(info.param[0] == '-' ? "Behind10s" : "Ahead10min");
                         });

}  // namespace
}  // namespace room_outbox::testing
