#include "caller_statement_check.h"

#include <algorithm>
#include <array>
#include <cctype>

namespace room_outbox::internal {
namespace {

constexpr std::array<std::string_view, 25> kImplicitCommit = {
    "COMMIT",  "ROLLBACK", "BEGIN",   "START",   "XA",       "CREATE",    "ALTER",
    "DROP",    "TRUNCATE", "RENAME",  "LOCK",    "UNLOCK",   "GRANT",     "REVOKE",
    "FLUSH",   "ANALYZE",  "OPTIMIZE", "REPAIR", "CACHE",    "INSTALL",   "UNINSTALL",
    "RESET",   "PURGE",    "CHANGE",  "SHUTDOWN"};

bool IsBlank(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

// Skips blanks, comments and '(' from `at`; an executable comment's marker is skipped, its text
// is not.
size_t SkipToVerb(std::string_view sql, size_t at) {
  while (at < sql.size()) {
    const std::string_view rest = sql.substr(at);
    if (IsBlank(sql[at]) || sql[at] == '(') {
      ++at;
    } else if (rest.starts_with("/*!") || rest.starts_with("/*M!")) {
      at += rest.starts_with("/*!") ? 3 : 4;
      while (at < sql.size() && std::isdigit(static_cast<unsigned char>(sql[at])) != 0) ++at;
    } else if (rest.starts_with("/*")) {
      const size_t end = sql.find("*/", at + 2);
      at = end == std::string_view::npos ? sql.size() : end + 2;
    } else if (rest.starts_with("#") || rest.starts_with("-- ") || rest == "--" ||
               rest.starts_with("--\t") || rest.starts_with("--\n")) {
      const size_t end = sql.find('\n', at);
      at = end == std::string_view::npos ? sql.size() : end + 1;
    } else {
      break;
    }
  }
  return at;
}

std::string Upper(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return out;
}

// The word at `at`: letters and underscores.
std::string WordAt(std::string_view sql, size_t at) {
  size_t end = at;
  while (end < sql.size() &&
         (std::isalpha(static_cast<unsigned char>(sql[end])) != 0 || sql[end] == '_')) {
    ++end;
  }
  return Upper(sql.substr(at, end - at));
}

}  // namespace

std::optional<std::string> RefusedCallerStatement(std::string_view sql) {
  const std::string verb = WordAt(sql, SkipToVerb(sql, 0));
  const bool commits = std::find(kImplicitCommit.begin(), kImplicitCommit.end(), verb) !=
                       kImplicitCommit.end();
  if (commits || (verb == "LOAD" && Upper(sql).find("INDEX") != std::string::npos)) {
    return verb + " ends or commits the transaction the command is written in";
  }
  if (verb == "SET" && Upper(sql).find("AUTOCOMMIT") != std::string::npos) {
    return "SET autocommit ends the transaction the command is written in";
  }
  return std::nullopt;
}

}  // namespace room_outbox::internal
