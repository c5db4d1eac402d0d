// What README.md, docs/*.md, docs/*.adoc and conf/*.toml say about the code is true, and what the
// code has is documented (STYLE rule 95, beside the man pages' own test, man_page_test.cc):
// every metric, config key, command line, exit code, file name, version constant and alert the
// text names exists, every metric family the relay and the hook export is in
// docs/operations.md, and every config key the loader accepts is in docs/configuration.md. The
// code side is read from the code: the metrics' renderers, ConfigKeys(), MakeCommandLine(), the
// exit codes, c.h, the schema steps, the tree, conf/alerts.yml. The last test shows each check
// failing on text with one claim planted.
#include "support/doc_claims.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "c_api/option_setter.h"
#include "config/config.h"
#include "config/exit_codes.h"
#include "daemon/command_line.h"
#include "daemon/relay_app.h"
#include "migrate/migrate.h"
#include "migrate/migrate_command.h"
#include "migrate/schema_steps.h"
#include "ops/ops_commands.h"
#include "room_outbox/c.h"
#include "support/exported_metrics.h"
#include "support/shipped_text.h"

namespace room_outbox::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

// Build trees, dependencies, hidden folders and fuzz corpora hold no file the docs name.
bool SkippedDir(const fs::path& path) {
  const std::string name = path.filename().string();
  return name.starts_with(".") || name.starts_with("build") || name.starts_with("obj-") ||
         name == "node_modules" || name == "corpus";
}

std::set<std::string> TreeFileNames() {
  std::set<std::string> names;
  for (auto it = fs::recursive_directory_iterator(SourceRoot());
       it != fs::recursive_directory_iterator(); ++it) {
    if (it->is_directory() && SkippedDir(it->path())) {
      it.disable_recursion_pending();
    } else if (it->is_regular_file()) {
      names.insert(it->path().filename().string());
    }
  }
  return names;
}

// Every match of `pattern`'s first group in `text`.
void Collect(const std::string& text, const std::string& pattern, std::set<std::string>& out) {
  const std::regex re(pattern);
  for (std::sregex_iterator it(text.begin(), text.end(), re), end; it != end; ++it) {
    out.insert((*it)[1].str());
  }
}

// The names starting room_outbox_ that are no metric: the tables (schema/*.sql), the C ABI's
// identifiers (c.h), the build's targets and the tree's file names (up to their first dot).
std::set<std::string> OtherNames(const std::set<std::string>& files) {
  std::set<std::string> names;
  for (const auto& entry : fs::directory_iterator(SourceRoot() / "schema")) {
    Collect(ReadSourceFile("schema/" + entry.path().filename().string()),
            R"(CREATE TABLE (?:IF NOT EXISTS )?`?(room_outbox_\w+))", names);
  }
  Collect(ReadSourceFile("hook/include/room_outbox/c.h"), R"(\b(room_outbox_\w+))", names);
  for (auto it = fs::recursive_directory_iterator(SourceRoot());
       it != fs::recursive_directory_iterator(); ++it) {
    const std::string name = it->path().filename().string();
    if (it->is_directory() && SkippedDir(it->path())) {
      it.disable_recursion_pending();
    } else if (name == "CMakeLists.txt" || name.ends_with(".cmake")) {
      Collect(ReadSourceFile(fs::relative(it->path(), SourceRoot()).string()),
              R"(add_(?:library|executable|custom_target)\(\s*(room_outbox_\w+))", names);
    }
  }
  for (const std::string& file : files) {
    if (file.starts_with("room_outbox_")) names.insert(file.substr(0, file.find('.')));
  }
  return names;
}

// The defaults of an empty config as --check-config prints them ("" when it cannot load).
std::string EffectiveDefaults() {
  char path[] = "/tmp/doc-claims-test-XXXXXX.toml";
  const int fd = mkstemps(path, 5);
  if (fd < 0) return "";
  close(fd);
  auto config = relay::LoadConfig(path);
  unlink(path);
  return config ? relay::RenderEffectiveConfig(*config) : "";
}

DocFacts ReadFacts() {
  DocFacts facts;
  facts.metric_series = ExportedSeriesNames();
  for (const auto& [name, type] : ExportedMetricFamilies()) facts.metric_families.insert(name);
  facts.file_names = TreeFileNames();
  facts.other_names = OtherNames(facts.file_names);
  const std::vector<std::string> keys = relay::ConfigKeys();
  facts.config_keys.insert(keys.begin(), keys.end());
  // A table whose keys are free: a table of the effective config with no key of its own.
  const std::string defaults = EffectiveDefaults();
  for (const std::string& key : keys) {
    const bool table = defaults.find("[" + key + "]") != std::string::npos;
    const bool has_keys = std::any_of(
        keys.begin(), keys.end(), [&](const std::string& k) { return k.starts_with(key + "."); });
    if (table && !has_keys) facts.free_tables.insert(key);
  }
  facts.option_keys = {std::string(c_api::kMysqlPasswordKey), std::string(c_api::kTimSecretKeyKey)};
  facts.exit_codes = {relay::kExitOk, relay::kExitRuntimeFailure, relay::kExitUsage};
  char version[16];
  std::snprintf(version, sizeof version, "0x%08x", static_cast<unsigned>(ROOM_OUTBOX_C_VERSION));
  facts.c_version = version;
  facts.c_major = (ROOM_OUTBOX_C_VERSION >> 24) & 0xff;
  facts.c_minor = (ROOM_OUTBOX_C_VERSION >> 16) & 0xff;
  facts.soversion = std::stoi(ROOM_OUTBOX_TEST_SOVERSION);
  facts.library_version = ROOM_OUTBOX_TEST_LIBRARY_VERSION;
  for (const relay::migrate::SchemaStep& step : relay::migrate::SchemaSteps()) {
    facts.schema_steps.insert(std::string(step.name));
    facts.schema_latest = std::max<int>(facts.schema_latest, static_cast<int>(step.version));
  }
  facts.schema_required = static_cast<int>(relay::migrate::kRequiredSchemaVersion);
  for (const auto& [alert, expr] : AlertRules(ReadSourceFile("conf/alerts.yml"))) {
    facts.alerts.insert(alert);
  }
  return facts;
}

const DocFacts& Facts() {
  static const DocFacts facts = ReadFacts();
  return facts;
}

std::unique_ptr<CLI::App> CommandLine() {
  static relay::CliOptions cli;
  static relay::ops::OpsCli ops;
  static relay::migrate::MigrateCli migrate;
  return relay::MakeCommandLine(cli, ops, migrate);
}

// `problems` as one line each, for a failure message.
std::string Listed(const std::vector<std::string>& problems) {
  std::string text;
  for (const std::string& p : problems) text += "\n  " + p;
  return text;
}

// The shipped lines of one file with `from` replaced by `to` (once; a failure when absent).
std::vector<TextLine> Planted(const std::string& file, const std::string& from,
                              const std::string& to) {
  std::string text = ReadSourceFile(file);
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << file << " has no " << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return LinesOfText(file, text);
}

TEST(DocClaimsTest, TheCodeSideIsReadFromTheCode) {
  const DocFacts& f = Facts();
  EXPECT_THAT(f.metric_families, Contains("room_outbox_publish_success_total"));
  EXPECT_THAT(f.metric_families, Contains("room_outbox_hook_events_committed_total"));
  EXPECT_THAT(f.other_names, Contains("room_outbox_schema_version"));  // a table
  EXPECT_THAT(f.other_names, Contains("room_outbox_hook_new"));        // the C ABI
  EXPECT_THAT(f.other_names, Contains("room_outbox_core"));            // a build target
  EXPECT_THAT(f.config_keys, Contains("outbox_worker.lease"));
  EXPECT_THAT(f.free_tables, Contains("tencent_im.max_age_by_type"));
  EXPECT_THAT(f.free_tables, Not(Contains("mysql")));
  EXPECT_EQ(f.schema_required, 11);
  EXPECT_GE(f.schema_latest, f.schema_required);
  EXPECT_THAT(f.file_names, Contains("outbox_sql.h"));
  EXPECT_THAT(f.alerts, Contains("RoomOutboxImFailing"));
  EXPECT_GT(ShippedDocLines().size(), 4000u);
}

TEST(DocClaimsTest, EveryMetricNameTheDocsUseExists) {
  const auto problems = MetricNameProblems(ShippedDocLines(), Facts());
  EXPECT_THAT(problems, IsEmpty()) << Listed(problems);
}

TEST(DocClaimsTest, EveryExportedMetricIsInOperationsMd) {
  const auto problems = UndocumentedMetrics(LinesOf("docs/operations.md"), Facts());
  EXPECT_THAT(problems, IsEmpty()) << Listed(problems);
}

TEST(DocClaimsTest, EveryConfigKeyTheDocsUseExists) {
  const auto problems = ConfigKeyProblems(ShippedDocLines(), Facts());
  EXPECT_THAT(problems, IsEmpty()) << Listed(problems);
}

TEST(DocClaimsTest, EveryConfigKeyIsInConfigurationMd) {
  const auto problems = ConfigTableProblems(LinesOf("docs/configuration.md"), Facts());
  EXPECT_THAT(problems, IsEmpty()) << Listed(problems);
}

TEST(DocClaimsTest, EveryCommandLineTheDocsShowExists) {
  const auto problems = CommandLineProblems(ShippedDocLines(), *CommandLine());
  EXPECT_THAT(problems, IsEmpty()) << Listed(problems);
}

TEST(DocClaimsTest, EveryExitCodeTheDocsNameExists) {
  const auto problems = ExitCodeProblems(ShippedDocLines(), Facts());
  EXPECT_THAT(problems, IsEmpty()) << Listed(problems);
}

TEST(DocClaimsTest, EveryFileTheDocsNameExists) {
  const auto problems = FileNameProblems(ShippedDocLines(), Facts());
  EXPECT_THAT(problems, IsEmpty()) << Listed(problems);
}

TEST(DocClaimsTest, EveryVersionTheDocsStateIsTheCodes) {
  const auto problems = VersionProblems(ShippedDocLines(), Facts());
  EXPECT_THAT(problems, IsEmpty()) << Listed(problems);
}

TEST(DocClaimsTest, EveryAlertTheDocsNameExists) {
  const auto problems = AlertNameProblems(ShippedDocLines(), Facts());
  EXPECT_THAT(problems, IsEmpty()) << Listed(problems);
}

TEST(DocClaimsTest, EachCheckFailsOnAPlantedClaim) {
  const DocFacts& f = Facts();
  EXPECT_THAT(
      MetricNameProblems(Planted("docs/operations.md", "`room_outbox_publish_success_total`",
                                 "`room_outbox_publish_sucess_total`"),
                         f),
      Contains(HasSubstr("room_outbox_publish_sucess_total: no metric")));
  EXPECT_THAT(
      UndocumentedMetrics(Planted("docs/operations.md", "| `room_outbox_rooms_backed_off` |",
                                  "| `rooms_backed_off` |"),
                          f),
      Contains("docs/operations.md does not document room_outbox_rooms_backed_off"));
  EXPECT_THAT(ConfigKeyProblems(
                  Planted("docs/hook.md", "`sync_publish_timeout`", "`[mysql] read_timeout`"), f),
              Contains(HasSubstr("[mysql] read_timeout: no such config key")));
  EXPECT_THAT(ConfigKeyProblems(Planted("conf/relay.tencent.example.toml", "# pack_max_events = 1",
                                        "# pack_max_event = 1"),
                                f),
              Contains(HasSubstr("tencent_im.pack_max_event: no such config key")));
  EXPECT_THAT(
      ConfigTableProblems(Planted("docs/configuration.md", "| `lease` |", "| `leases` |"), f),
      Contains("docs/configuration.md does not document outbox_worker.lease"));
  EXPECT_THAT(CommandLineProblems(Planted("docs/RUNBOOK.md", "outbox-relay stats [--top N]",
                                          "outbox-relay stats [--top N] [--since D]"),
                                  *CommandLine()),
              Contains(HasSubstr("outbox-relay stats --since: no such option")));
  EXPECT_THAT(
      ExitCodeProblems(Planted("docs/operations.md", "| 2 | bad usage", "| 3 | bad usage"), f),
      Contains(HasSubstr("\"Exit codes\" lists 0 1 3")));
  EXPECT_THAT(
      FileNameProblems(Planted("docs/relay.md", "`relay/src/worker/outbox_worker.cc`",
                               "`relay/src/worker/outbox_worker.cc`, `outbox_worker_waves.cc`"),
                       f),
      Contains(HasSubstr("outbox_worker_waves.cc: no file")));
  EXPECT_THAT(VersionProblems(Planted("docs/hook.md", "`ROOM_OUTBOX_C_VERSION` (0x01010000)",
                                      "`ROOM_OUTBOX_C_VERSION` (0x01000000)"),
                              f),
              Contains(HasSubstr("ROOM_OUTBOX_C_VERSION 0x01000000: it is 0x01010000")));
  EXPECT_THAT(AlertNameProblems(
                  Planted("docs/RUNBOOK.md", "### RoomOutboxImFailing", "### RoomOutboxImDown"), f),
              Contains(HasSubstr("RoomOutboxImDown: no alert")));
}

}  // namespace
}  // namespace room_outbox::testing
