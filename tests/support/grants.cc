#include "support/grants.h"

#include <filesystem>
#include <fstream>
#include <sstream>

namespace room_outbox::testing {

std::vector<std::string> GrantStatements() {
  std::ifstream file(std::filesystem::path(ROOM_OUTBOX_SOURCE_DIR) / "docs" / "grants.sql");
  std::ostringstream text;
  text << file.rdbuf();
  std::istringstream in(text.str());
  std::vector<std::string> statements;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line.starts_with("--")) continue;
    statements.push_back(line);
  }
  return statements;
}

std::string Substitute(std::string text, const std::map<std::string, std::string>& names) {
  for (const auto& [placeholder, value] : names) {
    for (size_t at = text.find(placeholder); at != std::string::npos;
         at = text.find(placeholder, at + value.size())) {
      text.replace(at, placeholder.size(), value);
    }
  }
  return text;
}

std::vector<std::string> GrantsTo(const std::string& target,
                                  const std::map<std::string, std::string>& names) {
  std::vector<std::string> grants;
  for (const std::string& statement : GrantStatements()) {
    if (statement.ends_with("TO " + target + ";")) grants.push_back(Substitute(statement, names));
  }
  return grants;
}

}  // namespace room_outbox::testing
