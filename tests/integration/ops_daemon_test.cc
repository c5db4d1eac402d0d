// The daemon under operations, as a process: /healthz, /readyz and room_outbox_db_up
// across a MariaDB stop and start; SIGHUP reloading the log level without stopping; journald
// priority prefixes when JOURNAL_STREAM names stderr; WATCHDOG=1 datagrams on NOTIFY_SOCKET; and
// promtool's verdict on the live /metrics and on conf/alerts.yml.
#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <mysql.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/fd.h"
#include "support/child_process.h"
#include "support/fake_im_server.h"
#include "support/loopback_http.h"
#include "support/private_mariadb.h"
#include "support/relay_process.h"
#include "support/test_database.h"
#include "support/wait.h"

namespace room_outbox::testing {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using std::chrono::seconds;
using ::testing::HasSubstr;
using SteadyClock = std::chrono::steady_clock;

fs::path MakeTempDir() {
  std::string tmpl = "/tmp/ops-daemon-test-XXXXXX";
  char* made = mkdtemp(tmpl.data());
  EXPECT_NE(made, nullptr);
  return made != nullptr ? fs::path(made) : fs::path();
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The value text of an unlabelled sample `name` in a Prometheus exposition, or "".
std::string Sample(const std::string& exposition, const std::string& name) {
  std::istringstream in(exposition);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(name + " ", 0) == 0) return line.substr(name.size() + 1);
  }
  return "";
}

// Adds a [metrics] section listening on a free port; returns the port.
int EnableMetrics(const RelayProcess& relay) {
  const int port = FreePort();
  std::ofstream(relay.config_path(), std::ios::app)
      << "\n[metrics]\nlisten = \"127.0.0.1:" << port << "\"\n";
  return port;
}

RelayProcessOptions DaemonOptions(const std::string& level = "info") {
  RelayProcessOptions options;
  options.node_id = "ops-daemon-test";
  options.log_level = level;
  options.mysql = {{"connect_timeout", "\"1s\""}};
  options.outbox_worker = {{"poll_interval", "\"200ms\""}, {"lease", "\"10s\""}};
  return options;
}

class OpsDaemonTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(fs::exists(RelayProcess::BinaryPath()));
    ASSERT_TRUE(im_.running()) << im_.start_error();
    dir_ = MakeTempDir();
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }

  FakeImServer im_;
  fs::path dir_;
};

TEST_F(OpsDaemonTest, HealthReadinessAndDbUpAcrossAMariaDbStopAndStart) {
  PrivateMariaDb server(dir_ / "mariadb");
  ASSERT_TRUE(server.Start());
  ASSERT_TRUE(server.CreateDatabase("ops_health"));
  MysqlOptions mysql;
  mysql.socket = server.socket();
  mysql.user = "root";
  mysql.database = "ops_health";
  RelayProcess relay(mysql, im_, DaemonOptions());
  const int port = EnableMetrics(relay);
  ASSERT_TRUE(relay.Start());

  ASSERT_TRUE(Eventually([&] { return Get(port, "/readyz").status == 200; }, seconds(20)))
      << relay.StderrTail();
  EXPECT_EQ(Get(port, "/healthz").status, 200);
  HttpAnswer metrics = Get(port, "/metrics");
  EXPECT_EQ(Sample(metrics.body, "room_outbox_db_up"), "1") << metrics.body;
  EXPECT_EQ(Sample(metrics.body, "room_outbox_pending_total"), "0") << metrics.body;

  ASSERT_TRUE(server.Stop());
  ASSERT_TRUE(Eventually([&] { return Get(port, "/readyz").status == 503; }, seconds(20)))
      << relay.StderrTail();
  EXPECT_THAT(Get(port, "/readyz").body, HasSubstr("database unreachable"));
  metrics = Get(port, "/metrics");
  EXPECT_EQ(Sample(metrics.body, "room_outbox_db_up"), "0") << metrics.body;
  // The loop is alive (it backs off and retries): healthy, not ready.
  std::this_thread::sleep_for(seconds(2));
  EXPECT_EQ(Get(port, "/healthz").status, 200) << relay.StderrTail();
  metrics = Get(port, "/metrics");
  EXPECT_NE(Sample(metrics.body, "room_outbox_pending_total"), "") << metrics.body;
  const double stats_age = std::stod(Sample(metrics.body, "room_outbox_stats_age_seconds"));
  EXPECT_GE(stats_age, 1.0) << "the pending gauges say how old they are";

  ASSERT_TRUE(server.Start());
  ASSERT_TRUE(Eventually([&] { return Get(port, "/readyz").status == 200; }, seconds(40)))
      << relay.StderrTail();
  metrics = Get(port, "/metrics");
  EXPECT_EQ(Sample(metrics.body, "room_outbox_db_up"), "1") << metrics.body;
  EXPECT_TRUE(relay.Alive());
  auto exit = relay.Stop(seconds(20));
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->exit_code, 0) << Describe(*exit);
}

TEST_F(OpsDaemonTest, SighupReloadsTheLogLevelAndNeverStopsTheRelay) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  RelayProcess relay(db, im_, DaemonOptions("info"));
  ASSERT_TRUE(relay.Start());
  ASSERT_TRUE(
      Eventually([&] { return relay.CountLogLines({"outbox worker started"}) == 1; }, seconds(20)))
      << relay.StderrTail();
  std::this_thread::sleep_for(milliseconds(500));
  EXPECT_EQ(relay.CountLogLines({"debug", "outbox round"}), 0u) << relay.StderrTail();

  // Switch the file to debug and send SIGHUP.
  std::string config = ReadFile(relay.config_path());
  const std::string from = "level = \"info\"";
  ASSERT_NE(config.find(from), std::string::npos) << config;
  config.replace(config.find(from), from.size(), "level = \"debug\"");
  std::ofstream(relay.config_path(), std::ios::trunc) << config;
  ASSERT_TRUE(relay.Signal(SIGHUP));
  ASSERT_TRUE(
      Eventually([&] { return relay.CountLogLines({"configuration reloaded"}) == 1; }, seconds(10)))
      << relay.StderrTail();
  EXPECT_EQ(relay.CountLogLines({"configuration reloaded", "log_level=debug"}), 1u)
      << relay.StderrTail();
  EXPECT_TRUE(Eventually(
      [&] {
        return relay.CountLogLines({"debug", "outbox round"}) > 0;
      },
      seconds(10)))
      << relay.StderrTail();
  EXPECT_TRUE(relay.Alive());

  // A file that no longer loads keeps the running configuration.
  std::ofstream(relay.config_path(), std::ios::app) << "\nnot toml at all [[[\n";
  ASSERT_TRUE(relay.Signal(SIGHUP));
  EXPECT_TRUE(Eventually([&] { return relay.CountLogLines({"configuration not reloaded"}) == 1; },
                         seconds(10)))
      << relay.StderrTail();
  std::this_thread::sleep_for(milliseconds(300));
  EXPECT_TRUE(relay.Alive()) << relay.StderrTail();
  const size_t rounds = relay.CountLogLines({"debug", "outbox round"});
  EXPECT_TRUE(Eventually(
      [&] {
        return relay.CountLogLines({"debug", "outbox round"}) > rounds;
      },
      seconds(10)))
      << "still debug, still running";
  auto exit = relay.Stop(seconds(20));
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->exit_code, 0) << Describe(*exit) << relay.StderrTail();
}

// Runs the relay with its stderr in `stderr_path` and JOURNAL_STREAM set by `journal_stream`
// (given the file's "dev:ino"), until `lines` log lines are there; returns the log.
std::string RunWithJournalStream(
    const RelayProcess& configured, const std::string& stderr_path,
    const std::function<std::string(const std::string&)>& journal_stream, size_t lines) {
  std::ofstream(stderr_path).flush();  // create it, so its inode is known before the start
  struct stat st {};
  EXPECT_EQ(stat(stderr_path.c_str(), &st), 0);
  const std::string dev_ino = std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
  ChildSpec spec;
  spec.argv = {RelayProcess::BinaryPath(), "--config", configured.config_path()};
  for (std::string& entry : CurrentEnvironment()) {
    if (entry.rfind("JOURNAL_STREAM=", 0) != 0 && entry.rfind("NOTIFY_SOCKET=", 0) != 0 &&
        entry.rfind("ROOM_OUTBOX_", 0) != 0) {
      spec.env.push_back(std::move(entry));
    }
  }
  spec.env.push_back("JOURNAL_STREAM=" + journal_stream(dev_ino));
  spec.stdout_path = stderr_path + ".out";
  spec.stderr_path = stderr_path;  // opened with O_TRUNC: the same inode
  std::string error;
  const pid_t pid = SpawnChild(spec, error);
  EXPECT_GT(pid, 0) << error;
  if (pid <= 0) return "";
  auto count = [&] {
    const std::string log = ReadFile(stderr_path);
    return static_cast<size_t>(std::count(log.begin(), log.end(), '\n'));
  };
  EXPECT_TRUE(Eventually([&] { return count() >= lines; }, seconds(20))) << ReadFile(stderr_path);
  kill(pid, SIGTERM);
  auto status = WaitForExit(pid, seconds(20), milliseconds(20), error);
  if (!status) (void)KillAndReap(pid, error);
  EXPECT_TRUE(status && WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << ReadFile(stderr_path);
  return ReadFile(stderr_path);
}

TEST_F(OpsDaemonTest, JournaldPrioritiesWhenJournalStreamIsStderr) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  // One row that IM keeps refusing: warn lines beside the info and debug ones.
  db.Exec(
      "INSERT INTO room_outbox (event_id, event_type, room_id, command_id, envelope, "
      "created_at_ms, updated_at_ms) VALUES ('undecodable-1', 'RoomGiftSent', 'r', 'c', "
      "'not json', 1, 1)");
  RelayProcess configured(db, im_, DaemonOptions("debug"));
  const std::string path = (dir_ / "journal-stderr.log").string();
  const std::string log = RunWithJournalStream(
      configured, path, [](const std::string& v) { return v; }, 30);
  std::istringstream in(log);
  std::string line;
  std::set<std::string> prefixes;
  size_t n = 0;
  const std::regex prefix("^<([2-7])>(trace|debug|info|warning|error|critical) ");
  while (std::getline(in, line)) {
    ++n;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(line, m, prefix)) << "line " << n << ": " << line;
    prefixes.insert(m[1]);
    const std::string level = m[2];
    const std::string expected = level == "error"     ? "3"
                                 : level == "warning" ? "4"
                                 : level == "info"    ? "6"
                                                      : "7";
    EXPECT_EQ(m[1], expected) << line;
  }
  EXPECT_TRUE(prefixes.count("6")) << log;
  EXPECT_TRUE(prefixes.count("7")) << log;
  EXPECT_TRUE(prefixes.count("3") || prefixes.count("4")) << log;
  // No timestamps: journald stamps lines itself.
  EXPECT_THAT(log, ::testing::Not(::testing::ContainsRegex("^<[0-9]>[0-9]{4}-")));

  // JOURNAL_STREAM naming another file (a child that inherited it): plain lines.
  const std::string other = (dir_ / "other-stderr.log").string();
  const std::string plain = RunWithJournalStream(
      configured, other, [](const std::string&) { return "1:2"; }, 5);
  EXPECT_EQ(plain.find("<6>"), std::string::npos) << plain;
  EXPECT_NE(plain.find("info "), std::string::npos) << plain;
}

// Binds a datagram socket at `path` and collects what arrives.
class NotifySocket {
 public:
  explicit NotifySocket(const std::string& path) {
    fd_ = core::Fd(socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::copy(path.begin(), path.end(), addr.sun_path);
    EXPECT_EQ(bind(fd_.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    timeval timeout{0, 200000};
    setsockopt(fd_.get(), SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  }
  // Receives for `d`; returns how many datagrams carried `what`.
  size_t CountFor(milliseconds d, const std::string& what) {
    size_t count = 0;
    const auto deadline = SteadyClock::now() + d;
    while (SteadyClock::now() < deadline) {
      char buf[4096];
      const ssize_t n = recv(fd_.get(), buf, sizeof(buf), 0);
      if (n > 0 && std::string(buf, static_cast<size_t>(n)).find(what) != std::string::npos) {
        ++count;
      }
    }
    return count;
  }

 private:
  core::Fd fd_;
};

TEST_F(OpsDaemonTest, WatchdogDatagramsReachTheNotifySocket) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  const std::string path = (dir_ / "notify.sock").string();
  NotifySocket sock(path);
  RelayProcessOptions options = DaemonOptions();
  // 600 ms: a kick at least every 300 ms (half the interval), from the worker loop's beats.
  options.env = {"NOTIFY_SOCKET=" + path, "WATCHDOG_USEC=600000"};
  RelayProcess relay(db, im_, options);
  ASSERT_TRUE(relay.Start());
  ASSERT_TRUE(
      Eventually([&] { return relay.CountLogLines({"systemd watchdog on"}) == 1; }, seconds(20)))
      << relay.StderrTail();
  const size_t kicks = sock.CountFor(seconds(3), "WATCHDOG=1");
  EXPECT_GE(kicks, 5u) << relay.StderrTail();
  EXPECT_LE(kicks, 20u) << "rate-limited to half of WATCHDOG_USEC";
  auto exit = relay.Stop(seconds(20));
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->exit_code, 0);

  // WATCHDOG_PID naming another process: the watchdog is not ours.
  const std::string other_path = (dir_ / "notify-other.sock").string();
  NotifySocket other(other_path);
  options.env = {"NOTIFY_SOCKET=" + other_path, "WATCHDOG_USEC=600000", "WATCHDOG_PID=1"};
  RelayProcess not_ours(db, im_, options);
  ASSERT_TRUE(not_ours.Start());
  EXPECT_EQ(other.CountFor(seconds(2), "WATCHDOG=1"), 0u);
  EXPECT_EQ(not_ours.CountLogLines({"systemd watchdog on"}), 0u);
}

TEST_F(OpsDaemonTest, ParkedRowsGaugeCountsParkedRows) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  db.Exec(
      "INSERT INTO room_outbox (event_id, event_type, room_id, command_id, envelope, status, "
      "created_at_ms, updated_at_ms) VALUES ('p1', 'RoomGiftSent', 'r', 'c1', '{}', 'parked', "
      "1, 1), ('p2', 'RoomGiftSent', 'r', 'c2', '{}', 'parked', 1, 1)");
  RelayProcess relay(db, im_, DaemonOptions());
  const int port = EnableMetrics(relay);
  ASSERT_TRUE(relay.Start());
  EXPECT_TRUE(Eventually(
      [&] { return Sample(Get(port, "/metrics").body, "room_outbox_parked_rows") == "2"; },
      seconds(20)))
      << Get(port, "/metrics").body << relay.StderrTail();
  EXPECT_EQ(db.Scalar("SELECT COUNT(*) FROM room_outbox WHERE status = 'parked'"), 2)
      << "the relay never claims parked rows";
}

// Runs promtool with `args`; returns its exit status and its output (stdout + stderr).
std::pair<int, std::string> Promtool(const std::string& args) {
  FILE* pipe = popen(("promtool " + args + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return {-1, ""};
  std::string out;
  char buf[512];
  while (fgets(buf, sizeof(buf), pipe) != nullptr) out += buf;
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

bool HavePromtool() { return std::system("command -v promtool >/dev/null 2>&1") == 0; }

TEST_F(OpsDaemonTest, PromtoolFindsOnlyTheSeedNamesInTheLiveMetrics) {
  if (!HavePromtool()) GTEST_SKIP() << "promtool not installed (Debian package prometheus)";
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  db.Exec(
      "INSERT INTO room_outbox (event_id, event_type, room_id, command_id, envelope, "
      "created_at_ms, updated_at_ms) VALUES ('undecodable-1', 'RoomGiftSent', 'r', 'c', "
      "'not json', 1, 1)");
  RelayProcess relay(db, im_, DaemonOptions());
  const int port = EnableMetrics(relay);
  ASSERT_TRUE(relay.Start());
  ASSERT_TRUE(Eventually([&] { return Get(port, "/readyz").status == 200; }, seconds(20)))
      << relay.StderrTail();
  const HttpAnswer metrics = Get(port, "/metrics");
  ASSERT_EQ(metrics.status, 200);
  for (const char* name :
       {"room_outbox_db_up", "room_outbox_parked_rows", "room_outbox_im_breaker_open",
        "room_outbox_in_flight_rows", "room_outbox_stats_age_seconds",
        "room_outbox_worker_heartbeat_age_seconds", "room_outbox_db_statements_total"}) {
    EXPECT_NE(Sample(metrics.body, name), "") << name << "\n" << metrics.body;
  }
  EXPECT_THAT(metrics.body,
              ::testing::ContainsRegex(
                  "room_outbox_build_info\\{version=\"[^\"]+\",revision=\"[^\"]+\"\\} 1"));
  EXPECT_THAT(metrics.body,
              HasSubstr("room_outbox_publish_failures_by_reason_total{reason=\"undecodable\"}"));
  const std::string file = (dir_ / "metrics.txt").string();
  std::ofstream(file) << metrics.body;
  auto [rc, out] = Promtool("check metrics < " + file);
  // The findings that the original specification's fixed names cause, and only those
  // (docs/operations.md, metrics).
  const std::set<std::string> allowed = {
      "room_outbox_pending_total non-counter metrics should not have \"_total\" suffix",
      "room_outbox_oldest_pending_age_ms metric names should not contain abbreviated units",
      "room_outbox_publish_latency_ms metric names should not contain abbreviated units",
  };
  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty()) continue;
    EXPECT_TRUE(allowed.count(line)) << "promtool: " << line << "\n" << out;
  }
  EXPECT_TRUE(rc == 0 || rc == 3) << "promtool exit " << rc << ": " << out;
}

TEST(OpsAlertRulesTest, PromtoolAcceptsTheAlertRules) {
  if (!HavePromtool()) GTEST_SKIP() << "promtool not installed (Debian package prometheus)";
  auto [rc, out] =
      Promtool("check rules " + std::string(ROOM_OUTBOX_SOURCE_DIR) + "/conf/alerts.yml");
  EXPECT_EQ(rc, 0) << out;
  EXPECT_THAT(out, HasSubstr("SUCCESS"));
}

// Under LoadCredential= the secret files are copies made at start: a reload re-reads the copy, and
// the relay says that a changed source file needs a restart.
TEST_F(OpsDaemonTest, SighupWithCredentialsSaysARestartIsNeeded) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  const fs::path creds = dir_ / "credentials";
  fs::create_directories(creds);
  std::ofstream(creds / "tim-secret-key") << im_.ClientOptions().secret_key << "\n";
  fs::permissions(creds / "tim-secret-key", fs::perms::owner_read | fs::perms::owner_write);
  RelayProcessOptions options = DaemonOptions();
  options.tencent_im = {{"secret_key_file", "\"tim-secret-key\""}};
  options.env = {"CREDENTIALS_DIRECTORY=" + creds.string()};
  RelayProcess relay(db, im_, options);
  ASSERT_TRUE(relay.Start());
  ASSERT_TRUE(
      Eventually([&] { return relay.CountLogLines({"outbox worker started"}) == 1; }, seconds(20)))
      << relay.StderrTail();
  EXPECT_EQ(relay.CountLogLines({"restart"}), 0u) << relay.StderrTail();
  ASSERT_TRUE(relay.Signal(SIGHUP));
  ASSERT_TRUE(
      Eventually([&] { return relay.CountLogLines({"configuration reloaded"}) == 1; }, seconds(10)))
      << relay.StderrTail();
  EXPECT_EQ(relay.CountLogLines({"systemd credentials", "after a restart",
                                 "credential_keys=tencent_im.secret_key_file"}),
            1u)
      << relay.StderrTail();
  auto exit = relay.Stop(seconds(20));
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->exit_code, 0) << Describe(*exit);
}

// A relay killed by SIGABRT (what systemd's watchdog sends) writes no core file even where the
// limit allows one: the process is not dumpable (prctl PR_SET_DUMPABLE 0 at start).
TEST_F(OpsDaemonTest, AnAbortedRelayWritesNoCoreFile) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  rlimit before{};
  ASSERT_EQ(::getrlimit(RLIMIT_CORE, &before), 0);
  rlimit allow = before;
  allow.rlim_cur = allow.rlim_max;  // inherited by the relay
  ASSERT_GT(allow.rlim_cur, 0u) << "the hard core limit is 0: nothing to show";
  ASSERT_EQ(::setrlimit(RLIMIT_CORE, &allow), 0);
  RelayProcess relay(db, im_, DaemonOptions());
  const bool started = relay.Start();
  ASSERT_EQ(::setrlimit(RLIMIT_CORE, &before), 0);
  ASSERT_TRUE(started);
  ASSERT_TRUE(
      Eventually([&] { return relay.CountLogLines({"outbox worker started"}) == 1; }, seconds(20)))
      << relay.StderrTail();
  ASSERT_TRUE(relay.Signal(SIGABRT));
  auto exit = relay.Wait(seconds(20));
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->signal, SIGABRT) << Describe(*exit);
  EXPECT_FALSE(exit->core_dumped) << "a core file holds the relay's secrets";
}

}  // namespace
}  // namespace room_outbox::testing
