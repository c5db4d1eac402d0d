// What the shipped docs (README.md, docs/*.md, docs/*.adoc, conf/*.toml comments) claim about
// the code, checked against what the code has: metric names, config keys, command lines, exit
// codes, file names, version constants and alert names. Each check returns one line per claim
// that is not true ("docs/hook.md:628: [mysql] read_timeout: no such config key"), empty when the
// text agrees with the code. The code side (DocFacts) is read from the code itself by the
// caller: the metrics' renderers, the config loader's key table, CLI11's app, the headers.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "support/shipped_text.h"

namespace CLI {
class App;
}  // namespace CLI

namespace room_outbox::testing {

struct DocFacts {
  std::set<std::string> metric_series;  // families, and a histogram's _bucket/_sum/_count
  std::set<std::string> metric_families;
  // Other names that start room_outbox_: tables, the C ABI's identifiers, build targets, files.
  std::set<std::string> other_names;
  std::set<std::string> config_keys;  // "node_id", "mysql", "mysql.host", ... (ConfigKeys())
  std::set<std::string> free_tables;  // tables whose keys are free (event types)
  std::set<std::string> option_keys;  // names only room_outbox_options_set takes (the secrets)
  std::set<int> exit_codes;
  std::string c_version;  // ROOM_OUTBOX_C_VERSION as "0x01010000"
  int c_major = 0, c_minor = 0;
  int soversion = 0;
  std::string library_version;  // the .so's full version, "1.1.0"
  int schema_latest = 0;
  int schema_required = 0;
  std::set<std::string> schema_steps;  // "007_pack_size"
  std::set<std::string> file_names;    // the basenames of the tree's files
  std::set<std::string> alerts;        // conf/alerts.yml
};

// room_outbox_* names that are neither an exported metric (a name ending "_*" is a prefix of
// one) nor one of facts.other_names.
std::vector<std::string> MetricNameProblems(const std::vector<TextLine>& lines,
                                            const DocFacts& facts);

// Families that `operations` (docs/operations.md) does not name in the first cell of a table row
// (its metric tables).
std::vector<std::string> UndocumentedMetrics(const std::vector<TextLine>& operations,
                                             const DocFacts& facts);

// Config keys named as `[section] key` (one code span; `[section] prefix_*` names keys by their
// start), `section.key` (code spans, fenced blocks, the comments of .toml files) and
// commented-out `# key = value` lines of a .toml section that do not exist.
std::vector<std::string> ConfigKeyProblems(const std::vector<TextLine>& lines,
                                           const DocFacts& facts);

// docs/configuration.md's key tables (the first cell of each row under a "### `[section]`" or
// "### Top level" heading) against the keys, both ways.
std::vector<std::string> ConfigTableProblems(const std::vector<TextLine>& configuration,
                                             const DocFacts& facts);

// Command lines `outbox-relay [COMMAND] [--option ...]` (a code span or a fenced line starting
// with it): the command and every option must exist in `app`. A lone word after outbox-relay (a
// log line's text, "`outbox-relay starting`") and the command's own error output ("outbox-relay
// purge: ...") are not command lines.
std::vector<std::string> CommandLineProblems(const std::vector<TextLine>& lines,
                                             const CLI::App& app);

// "exit code N", "exit status N", "exits N", "(exit N)": N is one of the codes; and the exit code
// table of docs/operations.md ("## Exit codes") lists exactly them.
std::vector<std::string> ExitCodeProblems(const std::vector<TextLine>& lines,
                                          const DocFacts& facts);

// Code spans that are a file name alone (e.g. `outbox_worker_claim.cc`) that no file of the tree
// has (names with a folder are doc_pointers_test's), and schema steps (`006_room_heads`) that do
// not exist.
std::vector<std::string> FileNameProblems(const std::vector<TextLine>& lines,
                                          const DocFacts& facts);

// ROOM_OUTBOX_C_VERSION's value, "C ABI N.M", the SONAME and library version, and the schema
// versions: "schema N" (a step that exists), "needs ... schema N" (the version required).
std::vector<std::string> VersionProblems(const std::vector<TextLine>& lines, const DocFacts& facts);

// Alert names (RoomOutbox...) that conf/alerts.yml does not define.
std::vector<std::string> AlertNameProblems(const std::vector<TextLine>& lines,
                                           const DocFacts& facts);

}  // namespace room_outbox::testing
