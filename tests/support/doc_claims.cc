#include "support/doc_claims.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <regex>
#include <sstream>

namespace room_outbox::testing {
namespace {

using Problems = std::vector<std::string>;

const std::set<std::string> kSections = {"mysql", "outbox_worker", "tencent_im", "hook",
                                         "log",   "metrics",       "wake"};

// What follows a dot in a file name, not a config key ("hook.md", "wake.sock", "metrics.cc").
const std::set<std::string> kFileExtensions = {
    "md",   "h",  "cc",  "c",    "go",  "toml",    "sql",   "json", "yml",  "yaml",  "adoc",
    "sh",   "pc", "so",  "a",    "txt", "service", "timer", "sock", "conf", "cmake", "js",
    "html", "in", "log", "port", "xz",  "map",     "abi",   "deb",  "d"};

bool IsWordChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Each match of `re` in `text` whose first character is not preceded by a character in
// `not_after` (std::regex has no lookbehind).
std::vector<std::smatch> Matches(const std::string& text, const std::regex& re,
                                 const std::string& not_after = "") {
  std::vector<std::smatch> out;
  for (std::sregex_iterator it(text.begin(), text.end(), re), end; it != end; ++it) {
    const size_t at = it->position();
    if (at > 0 && (IsWordChar(text[at - 1]) || not_after.find(text[at - 1]) != std::string::npos)) {
      continue;
    }
    out.push_back(*it);
  }
  return out;
}

// The pieces of a line its code is in: the spans, or the whole line when fenced or a .toml line.
std::vector<std::string> CodeOf(const TextLine& line) {
  if (line.fenced || line.file.ends_with(".toml")) return {line.text};
  return line.spans;
}

bool KnownKey(const std::string& key, const DocFacts& facts) {
  if (facts.config_keys.count(key) || facts.option_keys.count(key)) return true;
  for (const std::string& table : facts.free_tables) {
    if (key.starts_with(table + ".")) return true;
  }
  return false;
}

std::string StripLabels(std::string name) { return name.substr(0, name.find('{')); }

}  // namespace

Problems MetricNameProblems(const std::vector<TextLine>& lines, const DocFacts& facts) {
  static const std::regex kName(R"(room_outbox_[a-z0-9_]*[a-z0-9](_\*)?)");
  Problems problems;
  for (const TextLine& line : lines) {
    for (const std::smatch& m : Matches(line.text, kName)) {
      std::string name = m.str();
      bool known = false;
      if (name.ends_with("_*")) {
        const std::string prefix = name.substr(0, name.size() - 1);
        known = std::any_of(facts.metric_series.begin(), facts.metric_series.end(),
                            [&](const std::string& s) { return s.starts_with(prefix); });
      } else {
        known = facts.metric_series.count(name) || facts.other_names.count(name);
      }
      if (!known) {
        problems.push_back(line.where() + ": " + name +
                           ": no metric the relay or the hook exports (nor a table, a C ABI "
                           "name, a build target or a file)");
      }
    }
  }
  return problems;
}

Problems UndocumentedMetrics(const std::vector<TextLine>& operations, const DocFacts& facts) {
  static const std::regex kRow(R"(^\| ([^|]+) \|)");
  std::set<std::string> documented;
  for (const TextLine& line : operations) {
    std::smatch row;
    if (line.fenced || !std::regex_search(line.text, row, kRow)) continue;
    // The first cell's code spans: the names the row documents.
    const std::vector<TextLine> cell = LinesOfText(line.file, row[1].str());
    for (const std::string& span : cell.front().spans) documented.insert(StripLabels(span));
  }
  Problems problems;
  for (const std::string& family : facts.metric_families) {
    if (!documented.count(family)) {
      problems.push_back("docs/operations.md does not document " + family);
    }
  }
  return problems;
}

Problems ConfigKeyProblems(const std::vector<TextLine>& lines, const DocFacts& facts) {
  static const std::regex kBracketed(R"(^\[([a-z_.]+)\] ([a-z_][a-z0-9_]*\*?))");
  static const std::regex kDotted(R"(([a-z_]+)\.([a-z_][a-z0-9_]*(?:\.[A-Za-z0-9_*]+)?))");
  static const std::regex kTomlHeader(R"(^#?\s*\[([a-z_.]+)\]\s*$)");
  static const std::regex kCommentedKey(R"(^#\s*([a-z_][a-z0-9_]*)\s*=)");
  Problems problems;
  std::string toml_section;
  std::string toml_file;
  for (const TextLine& line : lines) {
    if (line.file != toml_file) {
      toml_file = line.file;
      toml_section.clear();
    }
    for (const std::string& code : CodeOf(line)) {
      std::smatch m;
      if (std::regex_search(code, m, kBracketed)) {
        const std::string key = m[1].str() + "." + m[2].str();
        const bool known = key.ends_with("*")
                               ? std::any_of(facts.config_keys.begin(), facts.config_keys.end(),
                                             [&](const std::string& k) {
                                               return k.starts_with(key.substr(0, key.size() - 1));
                                             })
                               : KnownKey(key, facts);
        if (!known) {
          problems.push_back(line.where() + ": [" + m[1].str() + "] " + m[2].str() +
                             ": no such config key");
        }
      }
      // Not after '/' (a path), '.' or '-' (a longer name), '$' or ':' (a variable, a URL), nor
      // after "'": an error text quoting what it refuses ("unknown key 'mysql.prot'").
      for (const std::smatch& d : Matches(code, kDotted, "./-$:'")) {
        const std::string section = d[1].str();
        const std::string rest = d[2].str();
        const std::string first = rest.substr(0, rest.find('.'));
        const size_t end = d.position() + d.length();
        if (!kSections.count(section) || kFileExtensions.count(first)) continue;
        if (end < code.size() && (code[end] == '(' || code[end] == '/')) continue;
        const std::string key = section + "." + (rest.ends_with(".*") ? first : rest);
        if (!KnownKey(key, facts) && !KnownKey(section + "." + first, facts)) {
          problems.push_back(line.where() + ": " + section + "." + rest + ": no such config key");
        }
      }
    }
    if (!line.file.ends_with(".toml")) continue;
    std::smatch m;
    if (std::regex_match(line.text, m, kTomlHeader)) {
      toml_section = m[1].str();
    } else if (std::regex_search(line.text, m, kCommentedKey)) {
      const std::string key = toml_section.empty() ? m[1].str() : toml_section + "." + m[1].str();
      if (!KnownKey(key, facts)) {
        problems.push_back(line.where() + ": " + key + ": no such config key");
      }
    }
  }
  return problems;
}

Problems ConfigTableProblems(const std::vector<TextLine>& configuration, const DocFacts& facts) {
  static const std::regex kHeading(R"(^### (?:`\[([a-z_.]+)\]`|(Top level))\s*$)");
  static const std::regex kRow(R"(^\| ([^|]+) \|)");
  static const std::regex kName(R"(`([a-z_][a-z0-9_]*)`)");
  std::set<std::string> documented;
  std::string section;
  bool in_keys = false;
  for (const TextLine& line : configuration) {
    std::smatch m;
    if (line.text.starts_with("## ")) in_keys = line.text == "## Keys";
    if (!in_keys) continue;
    if (line.text.starts_with("### ")) {
      section.clear();
      if (std::regex_match(line.text, m, kHeading)) {
        section = m[1].matched ? m[1].str() : "";
        if (m[1].matched) documented.insert(section);
      }
      continue;
    }
    if (!std::regex_search(line.text, m, kRow) || line.text.starts_with("|---")) continue;
    if (facts.free_tables.count(section)) continue;  // its rows name event types, not keys
    const std::string cell = m[1].str();
    for (const std::smatch& n : Matches(cell, kName)) {
      documented.insert(section.empty() ? n[1].str() : section + "." + n[1].str());
    }
  }
  Problems problems;
  for (const std::string& key : documented) {
    if (!facts.config_keys.count(key)) {
      problems.push_back("docs/configuration.md documents " + key + ", not a config key");
    }
  }
  for (const std::string& key : facts.config_keys) {
    if (!documented.count(key)) {
      problems.push_back("docs/configuration.md does not document " + key);
    }
  }
  return problems;
}

Problems CommandLineProblems(const std::vector<TextLine>& lines, const CLI::App& app) {
  Problems problems;
  auto check = [&](const TextLine& line, const std::string& command) {
    std::istringstream in(command);
    std::string word;
    in >> word;  // outbox-relay
    const CLI::App* scope = &app;
    std::string scope_name = "outbox-relay";
    bool first = true;
    while (in >> word) {
      if (word == "#" || word == "|" || word == "&&" || word == ";" || word.starts_with(">") ||
          word.starts_with("2>")) {
        break;
      }
      word.erase(
          std::remove_if(word.begin(), word.end(),
                         [](char c) { return c == '[' || c == ']' || c == '(' || c == ')'; }),
          word.end());
      if (first && !word.empty() && std::islower(static_cast<unsigned char>(word[0]))) {
        first = false;
        // "outbox-relay purge: ..." is the command's own error output, not a command line.
        if (word.back() == ':') return;
        const auto subs =
            app.get_subcommands([&](const CLI::App* s) { return s->get_name() == word; });
        if (subs.empty()) {
          // A word alone ("`outbox-relay starting`", a log line's text) is no command line;
          // one followed by arguments is.
          std::string rest;
          if (in >> rest) {
            problems.push_back(line.where() + ": outbox-relay " + word + ": no such command");
          }
          return;
        }
        scope = subs.front();
        scope_name += " " + word;
        continue;
      }
      first = false;
      if (!word.starts_with("--")) continue;
      const std::string name = word.substr(0, word.find('='));
      const std::string bare = name.substr(2);
      const auto has = [&](const CLI::App& a) {
        for (const CLI::Option* o : a.get_options()) {
          const auto& l = o->get_lnames();
          if (std::find(l.begin(), l.end(), bare) != l.end()) return true;
        }
        return false;
      };
      if (!has(*scope) && !(scope == &app && (bare == "help" || bare == "version"))) {
        problems.push_back(line.where() + ": " + scope_name + " " + name + ": no such option");
      }
    }
  };
  for (const TextLine& line : lines) {
    if (line.fenced) {
      std::string text = line.text;
      const size_t start = text.find_first_not_of(" \t$");
      if (start == std::string::npos) continue;
      text = text.substr(start);
      if (text.starts_with("sudo ")) text = text.substr(5);
      if (text.starts_with("outbox-relay ")) check(line, text);
    } else {
      for (const std::string& span : line.spans) {
        if (span.starts_with("outbox-relay ")) check(line, span);
      }
    }
  }
  return problems;
}

Problems ExitCodeProblems(const std::vector<TextLine>& lines, const DocFacts& facts) {
  static const std::regex kExit(
      R"(\b(?:exit(?:s| code| codes| status| with)?|exiting with)\s+(\d+)\b)");
  static const std::regex kTableRow(R"(^\| (\d+) \|)");
  Problems problems;
  std::set<int> table;
  bool in_table = false;
  for (const TextLine& line : lines) {
    for (const std::smatch& m : Matches(line.text, kExit)) {
      const int code = std::stoi(m[1].str());
      if (!facts.exit_codes.count(code)) {
        problems.push_back(line.where() + ": exit " + m[1].str() + ": no exit code of the code");
      }
    }
    if (line.file != "docs/operations.md") continue;
    if (line.text.starts_with("## ")) in_table = line.text == "## Exit codes";
    std::smatch row;
    if (in_table && std::regex_search(line.text, row, kTableRow)) table.insert(std::stoi(row[1]));
  }
  if (std::any_of(lines.begin(), lines.end(),
                  [](const TextLine& l) { return l.file == "docs/operations.md"; }) &&
      table != facts.exit_codes) {
    std::string listed;
    for (int c : table) listed += " " + std::to_string(c);
    problems.push_back("docs/operations.md \"Exit codes\" lists" + listed +
                       ", not every exit code of the code and nothing else");
  }
  return problems;
}

Problems FileNameProblems(const std::vector<TextLine>& lines, const DocFacts& facts) {
  static const std::regex kFile(
      R"([A-Za-z0-9][A-Za-z0-9_.-]*\.(?:cc|h|c|sh|cmake|sql|toml|go|md|adoc|yml|json|js|supp|service|timer|conf))");
  static const std::regex kStep(R"(\b(\d{3})_[a-z_]+[a-z]\b)");
  Problems problems;
  for (const TextLine& line : lines) {
    for (const std::string& span : line.spans) {
      // A span that is a file name alone (a name with a folder is docs_pointers' to check; a
      // file inside a command line may be the reader's own).
      if (std::regex_match(span, kFile) && !facts.file_names.count(span)) {
        problems.push_back(line.where() + ": " + span + ": no file of that name in the tree");
      }
      for (const std::smatch& m : Matches(span, kStep, "/")) {
        std::string step = m.str();
        if (!facts.schema_steps.count(step)) {
          problems.push_back(line.where() + ": " + step + ": no such schema step");
        }
      }
    }
  }
  return problems;
}

Problems VersionProblems(const std::vector<TextLine>& lines, const DocFacts& facts) {
  static const std::regex kCVersion(R"(ROOM_OUTBOX_C_VERSION`?[ (=]*(0x[0-9A-Fa-f]+))");
  static const std::regex kAbi(R"(\bC ABI (\d+)\.(\d+)\b)");
  static const std::regex kSoname(R"(libroom_outbox_hook\.so\.(\d+(?:\.\d+)*))");
  static const std::regex kSchema(R"(\bschema (?:version |step )?(\d+)\b)");
  static const std::regex kNeeds(
      R"(\b(?:needs?|requires?)\b[^.;:]{0,40}?\b(?:schema|version) (\d+)\b|\b(\d+) this outbox-relay needs\b)");
  static const std::regex kLatest(R"(\bthe latest is (\d+)\b)");
  Problems problems;
  for (const TextLine& line : lines) {
    const std::string& t = line.text;
    for (const std::smatch& m : Matches(t, kCVersion)) {
      std::string v = m[1].str();
      std::transform(v.begin(), v.end(), v.begin(), ::tolower);
      if (v != facts.c_version) {
        problems.push_back(line.where() + ": ROOM_OUTBOX_C_VERSION " + m[1].str() + ": it is " +
                           facts.c_version);
      }
    }
    for (const std::smatch& m : Matches(t, kAbi)) {
      const int major = std::stoi(m[1]), minor = std::stoi(m[2]);
      if (major != facts.c_major || minor > facts.c_minor) {
        problems.push_back(line.where() + ": C ABI " + m[1].str() + "." + m[2].str() +
                           ": this library's is " + std::to_string(facts.c_major) + "." +
                           std::to_string(facts.c_minor));
      }
    }
    for (const std::smatch& m : Matches(t, kSoname)) {
      const std::string v = m[1].str();
      const std::string major = v.substr(0, v.find('.'));
      const bool full = std::count(v.begin(), v.end(), '.') == 2;
      if (std::stoi(major) != facts.soversion || (full && v != facts.library_version)) {
        problems.push_back(line.where() + ": libroom_outbox_hook.so." + v +
                           ": the library is .so." + std::to_string(facts.soversion) + " (" +
                           facts.library_version + ")");
      }
    }
    for (const std::smatch& m : Matches(t, kSchema)) {
      if (std::stoi(m[1]) > facts.schema_latest) {
        problems.push_back(line.where() + ": schema " + m[1].str() + ": the latest step is " +
                           std::to_string(facts.schema_latest));
      }
    }
    for (const std::smatch& m : Matches(t, kNeeds)) {
      const std::string n = m[1].matched ? m[1].str() : m[2].str();
      if (t.find("schema") == std::string::npos && !m[2].matched) continue;
      if (std::stoi(n) != facts.schema_required) {
        problems.push_back(line.where() + ": needs schema " + n + ": outbox-relay needs " +
                           std::to_string(facts.schema_required));
      }
    }
    for (const std::smatch& m : Matches(t, kLatest)) {
      if (t.find("schema") != std::string::npos && std::stoi(m[1]) != facts.schema_latest) {
        problems.push_back(line.where() + ": the latest schema " + m[1].str() + ": it is " +
                           std::to_string(facts.schema_latest));
      }
    }
  }
  return problems;
}

Problems AlertNameProblems(const std::vector<TextLine>& lines, const DocFacts& facts) {
  static const std::regex kAlert(R"(\bRoomOutbox[A-Z][A-Za-z]+\b)");
  Problems problems;
  for (const TextLine& line : lines) {
    for (const std::smatch& m : Matches(line.text, kAlert)) {
      if (!facts.alerts.count(m.str())) {
        problems.push_back(line.where() + ": " + m.str() + ": no alert of conf/alerts.yml");
      }
    }
  }
  return problems;
}

}  // namespace room_outbox::testing
