#include "support/shipped_text.h"

#include <algorithm>
#include <fstream>
#include <sstream>

namespace room_outbox::testing {
namespace {

namespace fs = std::filesystem;

// The code spans of `text`; `*open` gets where a span opens that `text` does not close (npos when
// none), so a span broken over lines is read with the next line.
std::vector<std::string> CodeSpans(const std::string& text, size_t* open) {
  std::vector<std::string> spans;
  *open = std::string::npos;
  size_t at = 0;
  while ((at = text.find('`', at)) != std::string::npos) {
    const size_t content = text.find_first_not_of('`', at);
    if (content == std::string::npos) break;
    const size_t ticks = content - at;
    const std::string fence(ticks, '`');
    const size_t end = text.find(fence, at + ticks);
    if (end == std::string::npos) {
      *open = at;
      break;
    }
    spans.push_back(text.substr(at + ticks, end - at - ticks));
    at = end + ticks;
  }
  return spans;
}

int IndentOf(const std::string& line) {
  return static_cast<int>(
      line.find_first_not_of(' ') == std::string::npos ? line.size() : line.find_first_not_of(' '));
}

std::string Trim(const std::string& text) {
  const size_t first = text.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

}  // namespace

const fs::path& SourceRoot() {
  static const fs::path root(ROOM_OUTBOX_SOURCE_DIR);
  return root;
}

std::string ReadSourceFile(const std::string& relative) {
  std::ifstream in(SourceRoot() / relative);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<TextLine> LinesOfText(const std::string& name, const std::string& text) {
  const bool markdown = name.ends_with(".md");
  const bool adoc = name.ends_with(".adoc");
  std::vector<TextLine> lines;
  std::istringstream in(text);
  std::string line;
  bool fenced = false;
  std::string info;
  std::string carried;  // a span opened on an earlier line of the paragraph and not yet closed
  int number = 0;
  while (std::getline(in, line)) {
    TextLine l{name, ++number, line, false, "", {}};
    const bool fence_line =
        (markdown && line.starts_with("```")) || (adoc && (line == "----" || line == "...."));
    if (fence_line) {
      fenced = !fenced;
      info = fenced && markdown ? Trim(line.substr(3)) : "";
      carried.clear();
      lines.push_back(l);
      continue;
    }
    l.fenced = fenced;
    l.fence_info = fenced ? info : "";
    if (!fenced && (markdown || adoc)) {
      if (Trim(line).empty()) carried.clear();  // a span never crosses a paragraph
      const std::string joined = carried.empty() ? line : carried + " " + Trim(line);
      size_t open = std::string::npos;
      l.spans = CodeSpans(joined, &open);
      carried = open == std::string::npos ? "" : joined.substr(open);
    }
    lines.push_back(std::move(l));
  }
  return lines;
}

std::vector<TextLine> LinesOf(const std::string& relative) {
  return LinesOfText(relative, ReadSourceFile(relative));
}

std::vector<TextLine> ShippedDocLines() {
  std::vector<std::string> files = {"README.md"};
  for (const auto& [dir, extensions] :
       std::vector<std::pair<std::string, std::vector<std::string>>>{{"docs", {".md", ".adoc"}},
                                                                     {"conf", {".toml"}}}) {
    for (const auto& entry : fs::directory_iterator(SourceRoot() / dir)) {
      const std::string ext = entry.path().extension().string();
      if (entry.is_regular_file() &&
          std::find(extensions.begin(), extensions.end(), ext) != extensions.end()) {
        files.push_back(dir + "/" + entry.path().filename().string());
      }
    }
  }
  std::sort(files.begin(), files.end());
  std::vector<TextLine> all;
  for (const std::string& file : files) {
    std::vector<TextLine> lines = LinesOf(file);
    all.insert(all.end(), lines.begin(), lines.end());
  }
  return all;
}

std::vector<std::pair<std::string, std::string>> AlertRules(const std::string& rules_text) {
  std::vector<std::pair<std::string, std::string>> rules;
  std::istringstream in(rules_text);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::string alert;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string trimmed = Trim(lines[i]);
    if (trimmed.starts_with("- alert:")) alert = Trim(trimmed.substr(8));
    if (!trimmed.starts_with("expr:")) continue;
    std::string expr = Trim(trimmed.substr(5));
    if (expr == ">-" || expr == ">" || expr == "|" || expr == "|-") {
      expr.clear();
      const int indent = IndentOf(lines[i]);
      while (i + 1 < lines.size() &&
             (Trim(lines[i + 1]).empty() || IndentOf(lines[i + 1]) > indent)) {
        expr += " " + Trim(lines[++i]);
      }
      expr = Trim(expr);
    }
    rules.emplace_back(alert, expr);
  }
  return rules;
}

}  // namespace room_outbox::testing
