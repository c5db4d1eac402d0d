// The operations units: the purge service and its timer pass `systemd-analyze verify`
// with the built binary in ExecStart, the purge runs with the documented defaults, and the relay
// unit reloads with SIGHUP and has a watchdog.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace room_outbox::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

const fs::path kSystemdDir = fs::path(ROOM_OUTBOX_SOURCE_DIR) / "systemd";
const fs::path kRelayBinary = fs::path(ROOM_OUTBOX_BINARY_DIR) / "outbox-relay";
const fs::path kManDir = fs::path(ROOM_OUTBOX_BINARY_DIR) / "man";

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::pair<int, std::string> RunShell(const std::string& command) {
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return {-1, ""};
  std::string out;
  char buf[512];
  while (fgets(buf, sizeof(buf), pipe) != nullptr) out += buf;
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

TEST(OpsUnitsTest, PurgeServiceAndTimerVerify) {
  ASSERT_TRUE(fs::exists(kRelayBinary));
  ASSERT_EQ(access("/usr/bin/systemd-analyze", X_OK), 0) << "install systemd (make deps)";
  char tmpl[] = "/tmp/ops-units-test-XXXXXX";
  const fs::path dir = mkdtemp(tmpl);
  std::string service = ReadFile(kSystemdDir / "room-outbox-purge.service");
  const std::string installed = "ExecStart=/usr/local/bin/outbox-relay ";
  ASSERT_NE(service.find(installed), std::string::npos);
  for (size_t at = service.find(installed); at != std::string::npos;
       at = service.find(installed, at + 1)) {
    service.replace(at, installed.size(), "ExecStart=" + kRelayBinary.string() + " ");
  }
  std::ofstream(dir / "room-outbox-purge.service") << service;
  fs::copy_file(kSystemdDir / "room-outbox-purge.timer", dir / "room-outbox-purge.timer");
  for (const char* unit : {"room-outbox-purge.service", "room-outbox-purge.timer"}) {
    // verify also runs `man` on each Documentation= page: here the pages the build rendered.
    auto [rc, out] = RunShell("cd " + dir.string() + " && MANPATH=" + kManDir.string() +
                              " SYSTEMD_LOG_LEVEL=notice /usr/bin/systemd-analyze verify " +
                              (dir / unit).string());
    EXPECT_EQ(rc, 0) << unit << ": " << out;
    EXPECT_THAT(out, ::testing::Not(HasSubstr("room-outbox-purge"))) << out;
  }
  fs::remove_all(dir);
}

TEST(OpsUnitsTest, PurgeDefaultsAndRelayReloadAndWatchdog) {
  const std::string purge = ReadFile(kSystemdDir / "room-outbox-purge.service");
  EXPECT_THAT(purge, HasSubstr("purge --config /etc/room-outbox/relay.toml --published-before 7d "
                               "--command-log-before 30d"));
  EXPECT_THAT(purge, HasSubstr("Type=oneshot"));
  const std::string timer = ReadFile(kSystemdDir / "room-outbox-purge.timer");
  EXPECT_THAT(timer, HasSubstr("OnCalendar=*-*-* 03:30:00"));
  EXPECT_THAT(timer, HasSubstr("Persistent=true"));
  const std::string relay = ReadFile(kSystemdDir / "outbox-relay.service");
  EXPECT_THAT(relay, HasSubstr("\nExecReload=/bin/kill -HUP $MAINPID\n"));
  EXPECT_THAT(relay, HasSubstr("\nWatchdogSec=90s\n"));
}

}  // namespace
}  // namespace room_outbox::testing
