// The shipped systemd units: `systemd-analyze verify` accepts them (with the built binary in
// ExecStart), and the facts the shutdown contract relies on hold: the relay is ordered after the
// database (so it stops first), it is a notify service stopped by SIGTERM with a stop timeout well
// above publish_timeout, and its credentials match the names the shipped config uses.
#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "config/config.h"
#include "core/config/duration.h"
#include "core/fd.h"
#include "support/fake_im_server.h"
#include "support/loopback_http.h"
#include "support/relay_process.h"
#include "support/test_database.h"
#include "support/test_rows.h"
#include "support/wait.h"
#include "telemetry/metrics.h"

namespace room_outbox::relay {
namespace {

namespace fs = std::filesystem;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::IsSupersetOf;

const fs::path kSystemdDir = fs::path(ROOM_OUTBOX_SOURCE_DIR) / "systemd";
const fs::path kRelayBinary = fs::path(ROOM_OUTBOX_BINARY_DIR) / "outbox-relay";
const fs::path kManDir = fs::path(ROOM_OUTBOX_BINARY_DIR) / "man";

// section -> key -> every value (repeated keys and space-separated lists are split).
using Unit = std::map<std::string, std::map<std::string, std::vector<std::string>>>;

Unit ParseUnit(const fs::path& path) {
  Unit unit;
  std::ifstream in(path);
  EXPECT_TRUE(in) << path;
  std::string line;
  std::string section;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#' || line[0] == ';') continue;
    if (line.front() == '[' && line.back() == ']') {
      section = line.substr(1, line.size() - 2);
      continue;
    }
    const size_t eq = line.find('=');
    if (eq == std::string::npos) continue;
    const std::string key = line.substr(0, eq);
    const std::string value = line.substr(eq + 1);
    auto& values = unit[section][key];
    if (key == "ExecStart" || key == "LoadCredential" || key == "Description") {
      values.push_back(value);
    } else {
      std::istringstream words(value);
      std::string word;
      while (words >> word) values.push_back(word);
      if (value.empty()) values.push_back("");
    }
  }
  return unit;
}

std::string One(const Unit& unit, const std::string& section, const std::string& key) {
  auto s = unit.find(section);
  if (s == unit.end()) return "<no section " + section + ">";
  auto k = s->second.find(key);
  if (k == s->second.end() || k->second.empty()) return "<no key " + key + ">";
  return k->second.back();
}

std::vector<std::string> All(const Unit& unit, const std::string& section, const std::string& key) {
  auto s = unit.find(section);
  if (s == unit.end()) return {};
  auto k = s->second.find(key);
  return k == s->second.end() ? std::vector<std::string>{} : k->second;
}

// Runs a command, returns exit status and the combined output.
std::pair<int, std::string> RunCommand(const std::string& command) {
  std::string output;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return {-1, "popen failed"};
  std::array<char, 4096> buf{};
  size_t n = 0;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) output.append(buf.data(), n);
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

std::string FindSystemdAnalyze() {
  for (const char* candidate : {"/usr/bin/systemd-analyze", "/bin/systemd-analyze"}) {
    if (access(candidate, X_OK) == 0) return candidate;
  }
  return "";
}

class SystemdUnitsTest : public ::testing::Test {
 protected:
  SystemdUnitsTest() {
    char tmpl[] = "/tmp/relay-units-test-XXXXXX";
    dir_ = mkdtemp(tmpl);
  }
  ~SystemdUnitsTest() override { fs::remove_all(dir_); }

  // Copies the relay unit with ExecStart pointing at the built binary, so verify can check it.
  fs::path StageRelayUnit() {
    std::ifstream in(kSystemdDir / "outbox-relay.service");
    std::ostringstream text;
    text << in.rdbuf();
    std::string unit = text.str();
    const std::string installed = "ExecStart=/usr/local/bin/outbox-relay ";
    const size_t at = unit.find(installed);
    EXPECT_NE(at, std::string::npos) << "ExecStart does not run /usr/local/bin/outbox-relay";
    if (at != std::string::npos) {
      unit.replace(at, installed.size(), "ExecStart=" + kRelayBinary.string() + " ");
    }
    const fs::path staged = dir_ / "outbox-relay.service";
    std::ofstream(staged) << unit;
    return staged;
  }

  // verify must succeed and say nothing about our units: unknown keys or bad values are only
  // warnings in its exit status.
  void ExpectVerifies(const fs::path& unit) {
    const std::string analyze = FindSystemdAnalyze();
    ASSERT_FALSE(analyze.empty()) << "systemd-analyze not found; install systemd (make deps)";
    // verify also runs `man` on each Documentation= page: here the pages the build rendered.
    auto [rc, output] =
        RunCommand("cd " + dir_.string() + " && MANPATH=" + kManDir.string() +
                   " SYSTEMD_LOG_LEVEL=notice " + analyze + " verify " + unit.string());
    EXPECT_EQ(rc, 0) << output;
    EXPECT_THAT(output, ::testing::Not(HasSubstr(dir_.string()))) << output;
    EXPECT_THAT(output, ::testing::Not(HasSubstr("outbox-relay"))) << output;
  }

  fs::path dir_;
};

TEST_F(SystemdUnitsTest, RelayUnitVerifies) {
  ASSERT_TRUE(fs::exists(kRelayBinary)) << kRelayBinary << " is not built";
  ExpectVerifies(StageRelayUnit());
}

TEST_F(SystemdUnitsTest, VerifyCatchesABrokenUnit) {
  // The check above can fail: a unit with an unknown key or a missing binary does not pass.
  std::ofstream(dir_ / "broken.service")
      << "[Service]\nType=notify\nExecStart=" << kRelayBinary.string() << "\nTimeoutStopSecc=3s\n";
  const std::string analyze = FindSystemdAnalyze();
  ASSERT_FALSE(analyze.empty()) << "systemd-analyze not found";
  auto [rc, output] = RunCommand(analyze + " verify " + (dir_ / "broken.service").string());
  EXPECT_THAT(output, HasSubstr("TimeoutStopSecc"));
}

TEST_F(SystemdUnitsTest, RoomServiceDropInVerifies) {
  // A stand-in room-service unit with the shipped drop-in beside it.
  std::ofstream(dir_ / "room-service.service")
      << "[Unit]\nDescription=room-service stand-in\n[Service]\nExecStart=/bin/true\n";
  fs::create_directories(dir_ / "room-service.service.d");
  fs::copy_file(kSystemdDir / "room-service.service.d" / "10-room-outbox.conf",
                dir_ / "room-service.service.d" / "10-room-outbox.conf");
  StageRelayUnit();
  ExpectVerifies(dir_ / "room-service.service");
}

TEST_F(SystemdUnitsTest, RelayStopsBeforeTheDatabase) {
  const Unit unit = ParseUnit(kSystemdDir / "outbox-relay.service");
  EXPECT_THAT(All(unit, "Unit", "After"),
              IsSupersetOf({"mariadb.service", "mysql.service", "network-online.target"}));
  EXPECT_THAT(All(unit, "Unit", "Wants"), Contains("network-online.target"));
  EXPECT_EQ(One(unit, "Service", "Type"), "notify");
  EXPECT_EQ(One(unit, "Service", "KillSignal"), "SIGTERM");
  EXPECT_EQ(One(unit, "Service", "Restart"), "on-failure");
  EXPECT_EQ(
      All(unit, "Service", "ExecStart"),
      std::vector<std::string>{"/usr/local/bin/outbox-relay --config /etc/room-outbox/relay.toml"});
}

TEST_F(SystemdUnitsTest, StopTimeoutIsWellAbovePublishTimeout) {
  const Unit unit = ParseUnit(kSystemdDir / "outbox-relay.service");
  auto stop = core::ParseDuration(One(unit, "Service", "TimeoutStopSec"));
  ASSERT_TRUE(stop) << stop.error().message;
  fs::create_directories(dir_ / "creds");
  std::ofstream(dir_ / "creds" / "mysql-password") << "pw\n";
  std::ofstream(dir_ / "creds" / "tim-secret-key") << "key\n";
  setenv("CREDENTIALS_DIRECTORY", (dir_ / "creds").c_str(), 1);
  for (const char* name : {"relay.toml", "relay.docker.toml", "relay.tencent.example.toml"}) {
    auto config = LoadConfig((fs::path(ROOM_OUTBOX_SOURCE_DIR) / "conf" / name).string());
    ASSERT_TRUE(config) << config.error().message;
    // In flight rows may take one publish_timeout; marking and closing need a few seconds more.
    EXPECT_GE(*stop, 2 * config->outbox_worker.publish_timeout + std::chrono::seconds(10)) << name;
  }
  unsetenv("CREDENTIALS_DIRECTORY");
}

TEST_F(SystemdUnitsTest, CredentialsMatchTheShippedConfig) {
  const Unit unit = ParseUnit(kSystemdDir / "outbox-relay.service");
  EXPECT_THAT(All(unit, "Service", "LoadCredential"),
              IsSupersetOf({"mysql-password:/etc/room-outbox/mysql-password",
                            "tim-secret-key:/etc/room-outbox/tim-secret-key"}));
  // The example config names exactly these credentials: with only them in
  // $CREDENTIALS_DIRECTORY it loads and has both secrets.
  fs::create_directories(dir_ / "creds");
  std::ofstream(dir_ / "creds" / "mysql-password") << "pw\n";
  std::ofstream(dir_ / "creds" / "tim-secret-key") << "key\n";
  setenv("CREDENTIALS_DIRECTORY", (dir_ / "creds").c_str(), 1);
  unsetenv("ROOM_OUTBOX_MYSQL_PASSWORD");
  unsetenv("ROOM_OUTBOX_TIM_SECRET_KEY");
  auto config = LoadConfig(
      (fs::path(ROOM_OUTBOX_SOURCE_DIR) / "conf" / "relay.tencent.example.toml").string());
  unsetenv("CREDENTIALS_DIRECTORY");
  ASSERT_TRUE(config) << config.error().message;
  EXPECT_EQ(config->mysql.password, "pw");
  EXPECT_EQ(config->tencent_im.secret_key, "key");
}

TEST_F(SystemdUnitsTest, RelayUnitIsHardened) {
  const Unit unit = ParseUnit(kSystemdDir / "outbox-relay.service");
  EXPECT_EQ(One(unit, "Service", "NoNewPrivileges"), "yes");
  EXPECT_EQ(One(unit, "Service", "ProtectSystem"), "strict");
  EXPECT_EQ(One(unit, "Service", "ProtectHome"), "yes");
  EXPECT_EQ(One(unit, "Service", "PrivateTmp"), "yes");
  EXPECT_EQ(One(unit, "Service", "PrivateDevices"), "yes");
  EXPECT_EQ(One(unit, "Service", "DynamicUser"), "yes");
  EXPECT_EQ(All(unit, "Service", "RestrictAddressFamilies"),
            (std::vector<std::string>{"AF_UNIX", "AF_INET", "AF_INET6"}));
}

TEST_F(SystemdUnitsTest, NoUnitWritesACoreFile) {
  for (const fs::path& path :
       {kSystemdDir / "outbox-relay.service", kSystemdDir / "room-outbox-purge.service",
        kSystemdDir / "room-service.service.d" / "10-room-outbox.conf"}) {
    const Unit unit = ParseUnit(path);
    EXPECT_EQ(All(unit, "Service", "LimitCORE"), std::vector<std::string>{"0"}) << path;
  }
}

TEST_F(SystemdUnitsTest, ThePurgeGetsTheDatabasePasswordOnly) {
  const Unit unit = ParseUnit(kSystemdDir / "room-outbox-purge.service");
  EXPECT_EQ(All(unit, "Service", "LoadCredential"),
            std::vector<std::string>{"mysql-password:/etc/room-outbox/mysql-password"});
}

// The drop-in hands room-service the credentials the shipped config names, so a room service
// of any user resolves the root-only secret files through its own $CREDENTIALS_DIRECTORY.
TEST_F(SystemdUnitsTest, RoomServiceGetsTheCredentialsTheConfigNames) {
  const Unit dropin = ParseUnit(kSystemdDir / "room-service.service.d" / "10-room-outbox.conf");
  const Unit relay = ParseUnit(kSystemdDir / "outbox-relay.service");
  EXPECT_EQ(All(dropin, "Service", "LoadCredential"), All(relay, "Service", "LoadCredential"));
}

// The wake socket's group: the relay runs in room-outbox-wake, the group room-service's user is
// put in, and only that group can enter the runtime directory.
TEST_F(SystemdUnitsTest, RelayUnitRunsInTheWakeGroup) {
  const Unit unit = ParseUnit(kSystemdDir / "outbox-relay.service");
  EXPECT_EQ(One(unit, "Service", "Group"), "room-outbox-wake");
  EXPECT_EQ(One(unit, "Service", "RuntimeDirectoryMode"), "0750");
  EXPECT_EQ(kDefaultWakeSocketMode, 0660u);
}

// The number after `key` in /proc/PID/status ("Threads:", "VmHWM:" in kB); -1 when absent.
int64_t ProcStatus(pid_t pid, const std::string& key) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) == 0) return std::atoll(line.c_str() + key.size());
  }
  return -1;
}

// "256M" -> bytes (the suffixes MemoryMax= takes: K, M, G, base 1024).
int64_t UnitBytes(const std::string& value) {
  int64_t n = std::atoll(value.c_str());
  switch (value.empty() ? ' ' : value.back()) {
    case 'G':
      n *= 1024;
      [[fallthrough]];
    case 'M':
      n *= 1024;
      [[fallthrough]];
    case 'K':
      n *= 1024;
  }
  return n;
}

// MemoryMax= and TasksMax= keep a wide margin over what a running relay uses: its peak RSS
// (VmHWM) and its most threads, sampled while it delivers 2000 rows and while every metrics
// worker serves a scrape at once. The figures are printed (docs/operations.md quotes them).
TEST_F(SystemdUnitsTest, MemoryAndTaskLimitsLeaveAMarginOverARunningRelay) {
  const Unit unit = ParseUnit(kSystemdDir / "outbox-relay.service");
  const int64_t memory_max = UnitBytes(One(unit, "Service", "MemoryMax"));
  const int64_t tasks_max = std::atoll(One(unit, "Service", "TasksMax").c_str());
  ASSERT_GT(memory_max, 0) << One(unit, "Service", "MemoryMax");
  ASSERT_GT(tasks_max, 0) << One(unit, "Service", "TasksMax");

  testing::TestDatabase db;
  testing::FakeImServer im;
  ASSERT_TRUE(db.valid());
  ASSERT_TRUE(im.running()) << im.start_error();
  constexpr int kRows = 2000;
  for (int i = 0; i < kRows; i += 100) {
    std::string values;
    for (int j = i; j < i + 100; ++j) {
      const std::string id = "units-" + std::to_string(j);
      const std::string room = "units-room-" + std::to_string(j % 50);
      values += std::string(values.empty() ? "" : ", ") + "(" + testing::SqlQuote(id) +
                ", 'RoomGiftSent', " + testing::SqlQuote(room) + ", " +
                testing::SqlQuote("cmd-" + id) + ", " + testing::SqlQuote("req-" + id) + ", " +
                testing::SqlQuote(testing::TestEnvelope(id, room, j, "units")) +
                ", 'pending', 0, 0, " + testing::kServerNowSql + ", " + testing::kServerNowSql +
                ")";
    }
    db.Exec(
        "INSERT INTO room_outbox (event_id, event_type, room_id, command_id, request_id, "
        "envelope, status, retry_count, next_attempt_at_ms, created_at_ms, updated_at_ms) "
        "VALUES " +
        values);
  }
  testing::RelayProcessOptions options;
  options.outbox_worker = {{"batch_size", "500"}};
  testing::RelayProcess relay(db, im, options);
  const int port = testing::FreePort();
  std::ofstream(relay.config_path(), std::ios::app)
      << "\n[metrics]\nlisten = \"127.0.0.1:" << port << "\"\n";
  ASSERT_TRUE(relay.Start());
  int64_t threads = 0;
  auto sample = [&] { threads = std::max(threads, ProcStatus(relay.pid(), "Threads:")); };
  ASSERT_TRUE(testing::Eventually(
      [&] {
        sample();
        return db.Scalar("SELECT COUNT(*) FROM room_outbox WHERE status = 'published'") == kRows;
      },
      std::chrono::seconds(120)))
      << relay.StderrTail();
  std::vector<std::thread> scrapes;
  for (size_t i = 0; i < kMetricsListenerLimits.workers + 1; ++i) {
    scrapes.emplace_back([port] {
      httplib::Client client("127.0.0.1", port);
      client.set_read_timeout(5);
      (void)client.Get("/metrics");
    });
  }
  for (int i = 0; i < 20; ++i) sample();
  for (auto& t : scrapes) t.join();
  sample();
  const int64_t hwm_kb = ProcStatus(relay.pid(), "VmHWM:");
  ASSERT_GT(hwm_kb, 0);
  ASSERT_GT(threads, 0);
  std::printf(
      "relay: peak RSS %lld kB, at most %lld threads; MemoryMax %lld bytes, TasksMax %lld\n",
      static_cast<long long>(hwm_kb), static_cast<long long>(threads),
      static_cast<long long>(memory_max), static_cast<long long>(tasks_max));
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  // A sanitized relay maps shadow memory several times its own: its RSS says nothing of what the
  // unit's MemoryMax= must hold (the threads still do).
  constexpr bool kRssIsTheRelays = false;
#else
  constexpr bool kRssIsTheRelays = true;
#endif
  if (kRssIsTheRelays) {
    EXPECT_GE(memory_max, 4 * hwm_kb * 1024);
  }
  EXPECT_GE(tasks_max, 2 * threads);
}

TEST_F(SystemdUnitsTest, RoomServiceStartsAfterTheRelayAndTheDatabase) {
  const Unit dropin = ParseUnit(kSystemdDir / "room-service.service.d" / "10-room-outbox.conf");
  EXPECT_THAT(All(dropin, "Unit", "After"),
              IsSupersetOf({"outbox-relay.service", "mariadb.service", "mysql.service"}));
  EXPECT_THAT(All(dropin, "Unit", "Wants"), Contains("outbox-relay.service"));
}

}  // namespace
}  // namespace room_outbox::relay
