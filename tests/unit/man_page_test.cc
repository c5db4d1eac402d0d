// outbox-relay(8) and outbox-relay.toml(5) say what the code does: every option and command of
// the command line main() parses (MakeCommandLine), every exit status, every config key the
// loader accepts (ConfigKeys) with the default --check-config shows, and nothing that does not
// exist. The last test shows each check failing on a page with one line taken out or changed.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "config/config.h"
#include "daemon/command_line.h"
#include "daemon/relay_app.h"
#include "migrate/migrate_command.h"
#include "ops/ops_commands.h"
#include "support/man_page_drift.h"

namespace room_outbox::relay {
namespace {

using room_outbox::testing::CommandLineDrift;
using room_outbox::testing::ConfigPageDrift;
using room_outbox::testing::ConfigSummaryDrift;
using room_outbox::testing::ExitStatusDrift;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

const std::vector<int> kExitCodes = {kExitOk, kExitRuntimeFailure, kExitUsage};
// Keys whose default the page states in words: node_id is the host name.
const std::vector<std::string> kComputedDefaults = {"node_id"};

std::string ReadSource(const std::string& relative) {
  std::ifstream in(std::string(ROOM_OUTBOX_SOURCE_DIR) + "/" + relative);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string RelayPage() { return ReadSource("docs/outbox-relay.8.adoc"); }
std::string ConfigPage() { return ReadSource("docs/outbox-relay.toml.5.adoc"); }

// The effective config of an empty file: every key with its default.
std::string Defaults() {
  char path[] = "/tmp/man-page-test-XXXXXX.toml";
  const int fd = mkstemps(path, 5);
  if (fd < 0) return "";
  close(fd);
  auto config = LoadConfig(path);
  unlink(path);
  return config ? RenderEffectiveConfig(*config) : "";
}

// `text` with its one occurrence of `from` replaced by `to`.
std::string Edited(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << "the page has no " << from;
  EXPECT_EQ(text.find(from, at + 1), std::string::npos) << "the page has " << from << " twice";
  return at == std::string::npos ? text : text.replace(at, from.size(), to);
}

std::vector<std::string> CommandLineProblems(const std::string& page) {
  CliOptions cli;
  ops::OpsCli ops;
  migrate::MigrateCli migrate;
  const std::unique_ptr<CLI::App> app = MakeCommandLine(cli, ops, migrate);
  return CommandLineDrift(*app, page);
}

TEST(ManPageTest, EveryOptionAndCommandIsDocumented) {
  EXPECT_THAT(CommandLineProblems(RelayPage()), IsEmpty());
}

TEST(ManPageTest, EveryExitStatusIsDocumented) {
  EXPECT_THAT(ExitStatusDrift(kExitCodes, RelayPage()), IsEmpty());
}

TEST(ManPageTest, TheRelayPageSummarisesEveryConfigKey) {
  EXPECT_THAT(ConfigSummaryDrift(ConfigKeys(), RelayPage()), IsEmpty());
}

TEST(ManPageTest, TheConfigPageDocumentsEveryKeyWithItsDefault) {
  const std::string defaults = Defaults();
  ASSERT_THAT(defaults, HasSubstr("[outbox_worker]"));
  EXPECT_THAT(ConfigPageDrift(ConfigKeys(), defaults, kComputedDefaults, ConfigPage()), IsEmpty());
}

TEST(ManPageTest, ConfigKeysAreWhatTheLoaderReads) {
  const std::vector<std::string> keys = ConfigKeys();
  for (const char* key :
       {"node_id", "mysql", "mysql.host", "outbox_worker.lease", "tencent_im.priority_by_type",
        "tencent_im.max_age_by_type", "wake.socket"}) {
    EXPECT_THAT(keys, Contains(key));
  }
  EXPECT_THAT(keys, ::testing::Not(Contains("mysql.password")));  // a secret: never a key
}

TEST(ManPageTest, EachCheckFailsOnAPageThatDrifted) {
  const std::string relay = RelayPage();
  EXPECT_THAT(CommandLineProblems(Edited(relay, "*--dry-run*::\n  Count what would be deleted", "")),
              Contains("outbox-relay purge: option --dry-run is not documented"));
  EXPECT_THAT(CommandLineProblems(Edited(relay, "*--once*::\n", "*--twice*::\n")),
              Contains("outbox-relay: documents option --twice, which does not exist"));
  EXPECT_THAT(CommandLineProblems(Edited(relay, "=== stats\n", "=== statistics\n")),
              Contains("outbox-relay stats: the command is not documented"));
  EXPECT_THAT(CommandLineProblems(Edited(relay, "Default: 10.", "Default: 20.")),
              Contains("outbox-relay stats: option --top: the default 10 is not in its "
                       "description"));
  EXPECT_THAT(ExitStatusDrift(kExitCodes, Edited(relay, "*2*::\n", "")),
              Contains("exit status 2 is not documented"));
  EXPECT_THAT(ConfigSummaryDrift(ConfigKeys(), Edited(relay, "`lease`, ", "")),
              Contains("CONFIGURATION does not name outbox_worker.lease"));

  const std::string page = ConfigPage();
  const std::string defaults = Defaults();
  auto problems = [&](const std::string& edited) {
    return ConfigPageDrift(ConfigKeys(), defaults, kComputedDefaults, edited);
  };
  EXPECT_THAT(problems(Edited(page, "*lease* = `\"30s\"`::\n", "")),
              Contains("KEYS does not document outbox_worker.lease"));
  EXPECT_THAT(problems(Edited(page, "*batch_size* = `100`::", "*batch_size* = `200`::")),
              Contains("outbox_worker.batch_size: the page says the default is 200, the code 100"));
  EXPECT_THAT(problems(Edited(page, "=== [wake]\n", "=== [wake]\n\n*colour* = `\"red\"`::\n")),
              Contains("KEYS documents wake.colour, not a key"));
  EXPECT_THAT(ConfigPageDrift(ConfigKeys(), Edited(defaults, "\nlease = \"30s\"\n", "\n"),
                              kComputedDefaults, page),
              Contains("outbox_worker.lease: --check-config shows no default"));
}

}  // namespace
}  // namespace room_outbox::relay
