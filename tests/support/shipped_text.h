// The text the project ships to its readers, for the checks that keep it true: README.md,
// docs/*.md, docs/*.adoc (the man pages), conf/*.toml, conf/alerts.yml. Read as lines, with what
// each line holds in code (inline `spans`, fenced blocks), and the pieces of the alert rules.
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace room_outbox::testing {

// One line of a shipped file.
struct TextLine {
  std::string file;  // relative to the source tree, e.g. "docs/hook.md"
  int number = 0;    // 1-based
  std::string text;
  bool fenced = false;             // inside a ``` block (markdown) or a ---- / .... block (adoc)
  std::string fence_info;          // the fence's info string ("promql", "sh", ...) when fenced
  std::vector<std::string> spans;  // the inline `code spans` of the line (not when fenced)
  std::string where() const { return file + ":" + std::to_string(number); }
};

// The source tree (ROOM_OUTBOX_SOURCE_DIR).
const std::filesystem::path& SourceRoot();

// Every line of the shipped docs: README.md, docs/*.md, docs/*.adoc, conf/*.toml.
std::vector<TextLine> ShippedDocLines();

// The lines of one file (relative path), classified as above.
std::vector<TextLine> LinesOf(const std::string& relative);

// The same for `text` given as the content of `name` (the checks' tests feed edited text).
std::vector<TextLine> LinesOfText(const std::string& name, const std::string& text);

// The whole file as one string ("" when unreadable).
std::string ReadSourceFile(const std::string& relative);

// A Prometheus rules file's alerts: (alert name, its expr), multi-line `expr: >-` blocks joined.
std::vector<std::pair<std::string, std::string>> AlertRules(const std::string& rules_text);

}  // namespace room_outbox::testing
