#include "support/man_page_drift.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "support/adoc_outline.h"

namespace room_outbox::testing {
namespace {

using Names = std::set<std::string>;

const char kEveryCommand[] = "Options of every command";

// The names of an option as a page writes them: *--long*, *-s*, or _POSITIONAL_.
Names OptionNames(const CLI::Option& option) {
  Names names;
  for (const std::string& l : option.get_lnames()) names.insert("--" + l);
  for (const std::string& s : option.get_snames()) names.insert("-" + s);
  if (names.empty()) names.insert(option.get_name(true));
  return names;
}

// The names an item's term documents: *--long*, *-s*, or a term that is only _POSITIONAL_.
Names TermNames(const std::string& term) {
  Names names;
  for (const std::string& token : Marked(term, '*', '*')) {
    if (token.rfind('-', 0) == 0) names.insert(token);
  }
  if (names.empty() && term.size() > 2 && term.front() == '_' && term.back() == '_') {
    names.insert(term.substr(1, term.size() - 2));
  }
  return names;
}

// Options of one scope of the page: name -> the text of the item documenting it.
std::map<std::string, std::string> PageOptions(const AdocSection& section) {
  std::map<std::string, std::string> options;
  for (const AdocItem& item : section.items) {
    for (const std::string& name : TermNames(item.term))
      options[name] = item.term + " " + item.body;
  }
  return options;
}

// The value an item's text gives after "Default: ", without backticks and the closing '.'
// ("Default: `/etc/x.toml`." -> "/etc/x.toml"); empty when it gives none.
std::string StatedDefault(const std::string& text) {
  const std::string marker = "Default: ";
  const size_t at = text.find(marker);
  if (at == std::string::npos) return "";
  std::string value = text.substr(at + marker.size());
  value = value.substr(0, value.find(' '));
  while (!value.empty() && (value.back() == '.' || value.back() == ',')) value.pop_back();
  if (value.size() >= 2 && value.front() == '`' && value.back() == '`') {
    value = value.substr(1, value.size() - 2);
  }
  return value;
}

const std::string* Find(const std::map<std::string, std::string>& items, const std::string& name) {
  auto it = items.find(name);
  return it == items.end() ? nullptr : &it->second;
}

// The options of `app` against those its section documents (`documented`) and those documented
// once for every command (`shared`), both ways.
void CompareScope(const std::string& scope, const CLI::App& app,
                  const std::map<std::string, std::string>& documented,
                  const std::map<std::string, std::string>& shared,
                  std::vector<std::string>& problems) {
  Names in_code;
  for (const CLI::Option* option : app.get_options()) {
    for (const std::string& name : OptionNames(*option)) {
      in_code.insert(name);
      const std::string* text = Find(documented, name);
      if (text == nullptr) text = Find(shared, name);
      if (text == nullptr) {
        problems.push_back(scope + ": option " + name + " is not documented");
        continue;
      }
      // A value option's default, as --help shows it (a flag's is not shown).
      const std::string value = option->get_default_str();
      if (!value.empty() && option->get_items_expected_max() > 0 && StatedDefault(*text) != value) {
        problems.push_back(scope + ": option " + name + ": the default " + value +
                           " is not in its description");
      }
    }
  }
  for (const auto& [name, text] : documented) {
    if (in_code.count(name) == 0) {
      problems.push_back(scope + ": documents option " + name + ", which does not exist");
    }
  }
}

}  // namespace

std::vector<std::string> CommandLineDrift(const CLI::App& app, const std::string& page) {
  std::vector<std::string> problems;
  const std::vector<AdocSection> outline = ReadAdocOutline(page);
  const std::vector<AdocSection> options = SectionsUnder(outline, "OPTIONS");
  const std::vector<AdocSection> commands = SectionsUnder(outline, "COMMANDS");
  if (options.empty() || commands.empty()) {
    return {"the page has no OPTIONS or no COMMANDS section"};
  }
  CompareScope("outbox-relay", app, PageOptions(options.front()), {}, problems);

  std::map<std::string, std::string> every_command;
  std::map<std::string, const AdocSection*> documented;
  for (const AdocSection& section : commands) {
    if (section.level != 3) continue;
    if (section.title == kEveryCommand) {
      every_command = PageOptions(section);
    } else {
      documented[section.title] = &section;
    }
  }
  Names in_code;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    const std::string scope = "outbox-relay " + sub->get_name();
    in_code.insert(sub->get_name());
    auto it = documented.find(sub->get_name());
    if (it == documented.end()) {
      problems.push_back(scope + ": the command is not documented");
      continue;
    }
    CompareScope(scope, *sub, PageOptions(*it->second), every_command, problems);
    for (const auto& [name, text] : every_command) {
      const auto options_of_sub = sub->get_options();
      const bool has =
          std::any_of(options_of_sub.begin(), options_of_sub.end(),
                      [&](const CLI::Option* o) { return OptionNames(*o).count(name); });
      if (!has) problems.push_back(scope + ": lacks option " + name + " of every command");
    }
  }
  for (const auto& [name, section] : documented) {
    if (in_code.count(name) == 0) {
      problems.push_back("documents command " + name + ", which does not exist");
    }
  }
  return problems;
}

std::vector<std::string> ExitStatusDrift(const std::vector<int>& codes, const std::string& page) {
  Names in_code;
  for (int code : codes) in_code.insert(std::to_string(code));
  Names documented;
  for (const AdocSection& section : SectionsUnder(ReadAdocOutline(page), "EXIT STATUS")) {
    for (const AdocItem& item : section.items) {
      for (const std::string& token : Marked(item.term, '*', '*')) documented.insert(token);
    }
  }
  std::vector<std::string> problems;
  for (const std::string& code : in_code) {
    if (!documented.count(code)) problems.push_back("exit status " + code + " is not documented");
  }
  for (const std::string& code : documented) {
    if (!in_code.count(code)) problems.push_back("documents exit status " + code + ", not used");
  }
  return problems;
}

std::vector<std::string> ConfigSummaryDrift(const std::vector<std::string>& keys,
                                            const std::string& page) {
  Names documented;
  for (const AdocSection& section : SectionsUnder(ReadAdocOutline(page), "CONFIGURATION")) {
    for (const AdocItem& item : section.items) {
      std::string table;
      if (item.term != "top level") {
        const auto quoted = Marked(item.term, '`', '`');
        if (quoted.size() != 1 || quoted[0].size() < 2) continue;
        table = quoted[0].substr(1, quoted[0].size() - 2);  // "[mysql]" -> "mysql"
        documented.insert(table);
      }
      for (const std::string& key : Marked(item.body, '`', '`')) {
        documented.insert(table.empty() ? key : table + "." + key);
      }
    }
  }
  std::vector<std::string> problems;
  for (const std::string& key : keys) {
    if (!documented.count(key)) problems.push_back("CONFIGURATION does not name " + key);
  }
  const Names in_code(keys.begin(), keys.end());
  for (const std::string& key : documented) {
    if (!in_code.count(key)) problems.push_back("CONFIGURATION names " + key + ", not a key");
  }
  return problems;
}

std::vector<std::string> ConfigPageDrift(const std::vector<std::string>& keys,
                                         const std::string& defaults,
                                         const std::vector<std::string>& computed,
                                         const std::string& page) {
  // The defaults: "table.key" -> the value as the effective config writes it.
  std::map<std::string, std::string> default_of;
  Names default_tables;
  {
    std::istringstream in(defaults);
    std::string line;
    std::string table;
    while (std::getline(in, line)) {
      if (line.empty() || line[0] == '#') continue;
      if (line[0] == '[') {
        table = line.substr(1, line.find(']') - 1);
        default_tables.insert(table);
        continue;
      }
      const size_t eq = line.find(" = ");
      if (eq == std::string::npos) continue;
      default_of[(table.empty() ? "" : table + ".") + line.substr(0, eq)] = line.substr(eq + 3);
    }
  }
  // The page: "=== [table]" headings and "*key* = `default`::" items below them.
  std::map<std::string, std::string> documented;  // name -> default as written ("" for tables)
  for (const AdocSection& section : SectionsUnder(ReadAdocOutline(page), "KEYS")) {
    if (section.level != 3) continue;
    std::string table;
    if (section.title.size() > 2 && section.title.front() == '[') {
      table = section.title.substr(1, section.title.size() - 2);
      documented[table] = "";
    }
    for (const AdocItem& item : section.items) {
      const auto bold = Marked(item.term, '*', '*');
      if (bold.empty()) continue;
      const std::string name = table.empty() ? bold[0] : table + "." + bold[0];
      const size_t eq = item.term.find(" = ");
      std::string value = eq == std::string::npos ? "" : item.term.substr(eq + 3);
      if (value.size() >= 2 && value.front() == '`' && value.back() == '`') {
        value = value.substr(1, value.size() - 2);
      }
      documented[name] = value;
    }
  }
  const Names computed_keys(computed.begin(), computed.end());
  std::vector<std::string> problems;
  for (const std::string& key : keys) {
    auto it = documented.find(key);
    if (it == documented.end()) {
      problems.push_back("KEYS does not document " + key);
      continue;
    }
    if (default_tables.count(key) || computed_keys.count(key)) continue;
    auto expected = default_of.find(key);
    if (expected == default_of.end()) {
      problems.push_back(key + ": --check-config shows no default");
    } else if (it->second != expected->second) {
      problems.push_back(key + ": the page says the default is " +
                         (it->second.empty() ? "(nothing)" : it->second) + ", the code " +
                         expected->second);
    }
  }
  const Names in_code(keys.begin(), keys.end());
  for (const auto& [name, value] : documented) {
    if (!in_code.count(name)) problems.push_back("KEYS documents " + name + ", not a key");
  }
  return problems;
}

}  // namespace room_outbox::testing
