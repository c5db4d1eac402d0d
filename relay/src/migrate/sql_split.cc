#include "migrate/sql_split.h"

namespace room_outbox::relay::migrate {
namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// Appends `statement` without its surrounding white space, when anything is left.
void Finish(std::string& statement, std::vector<std::string>& out) {
  size_t begin = 0;
  size_t end = statement.size();
  while (begin < end && IsSpace(statement[begin])) ++begin;
  while (end > begin && IsSpace(statement[end - 1])) --end;
  if (end > begin) {
    out.push_back(statement.substr(begin, end - begin));
  }
  statement.clear();
}

// The index just past the comment starting at `at`, or `at` when none starts there.
size_t SkipComment(std::string_view text, size_t at) {
  const bool dash = text.substr(at, 2) == "--" && (at + 2 == text.size() || IsSpace(text[at + 2]));
  if (dash || text[at] == '#') {
    const size_t eol = text.find('\n', at);
    return eol == std::string_view::npos ? text.size() : eol;
  }
  if (text.substr(at, 2) == "/*") {
    const size_t end = text.find("*/", at + 2);
    return end == std::string_view::npos ? text.size() : end + 2;
  }
  return at;
}

// The index just past the quoted text starting at `at` (a doubled quote or, except in `...`, a
// backslash escapes one character).
size_t SkipQuoted(std::string_view text, size_t at) {
  const char quote = text[at];
  size_t i = at + 1;
  while (i < text.size()) {
    if (text[i] == '\\' && quote != '`') {
      i += 2;
    } else if (text[i] == quote) {
      if (i + 1 < text.size() && text[i + 1] == quote) {
        i += 2;
      } else {
        return i + 1;
      }
    } else {
      ++i;
    }
  }
  return text.size();
}

}  // namespace

std::vector<std::string> SplitSqlStatements(std::string_view text) {
  std::vector<std::string> out;
  std::string statement;
  size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (const size_t past = SkipComment(text, i); past != i) {
      statement += ' ';
      i = past;
    } else if (c == '\'' || c == '"' || c == '`') {
      const size_t past = SkipQuoted(text, i);
      statement.append(text.substr(i, past - i));
      i = past;
    } else if (c == ';') {
      Finish(statement, out);
      ++i;
    } else {
      statement += c;
      ++i;
    }
  }
  Finish(statement, out);
  return out;
}

}  // namespace room_outbox::relay::migrate
