#include "support/adoc_outline.h"

#include <sstream>

namespace room_outbox::testing {
namespace {

std::string Trim(const std::string& s) {
  const size_t begin = s.find_first_not_of(" \t\r");
  if (begin == std::string::npos) return "";
  return s.substr(begin, s.find_last_not_of(" \t\r") - begin + 1);
}

// `term::` or `term:: text` at the start of a line (an indented line continues the item above).
bool SplitTerm(const std::string& line, std::string* term, std::string* rest) {
  if (line.empty() || line[0] == ' ' || line[0] == '\t') return false;
  for (size_t at = line.find("::"); at != std::string::npos; at = line.find("::", at + 1)) {
    const size_t after = at + 2;
    if (after == line.size() || line[after] == ' ') {
      *term = Trim(line.substr(0, at));
      *rest = Trim(line.substr(after));
      return !term->empty();
    }
  }
  return false;
}

}  // namespace

std::vector<AdocSection> ReadAdocOutline(const std::string& text) {
  std::vector<AdocSection> outline;
  std::istringstream in(text);
  std::string line;
  bool in_listing = false;
  bool in_item = false;  // the item's body runs until a blank line
  while (std::getline(in, line)) {
    if (Trim(line) == "----") {
      in_listing = !in_listing;
      in_item = false;
      continue;
    }
    if (in_listing || line.rfind("//", 0) == 0) continue;
    if (line.rfind("== ", 0) == 0 || line.rfind("=== ", 0) == 0) {
      const int level = line[2] == '=' ? 3 : 2;
      outline.push_back({level, Trim(line.substr(level + 1)), {}});
      in_item = false;
      continue;
    }
    if (outline.empty()) continue;
    std::string term;
    std::string rest;
    if (SplitTerm(line, &term, &rest)) {
      outline.back().items.push_back({term, rest});
      in_item = true;
    } else if (Trim(line).empty()) {
      in_item = false;
    } else if (in_item) {
      std::string& body = outline.back().items.back().body;
      body += (body.empty() ? "" : " ") + Trim(line);
    }
  }
  return outline;
}

std::vector<AdocSection> SectionsUnder(const std::vector<AdocSection>& outline,
                                       const std::string& title) {
  std::vector<AdocSection> out;
  for (const AdocSection& section : outline) {
    if (section.level == 2) {
      if (!out.empty()) break;
      if (section.title != title) continue;
    }
    if (section.level == 2 || !out.empty()) out.push_back(section);
  }
  return out;
}

std::vector<std::string> Marked(const std::string& text, char open, char close) {
  std::vector<std::string> tokens;
  for (size_t at = text.find(open); at != std::string::npos; at = text.find(open, at)) {
    const size_t end = text.find(close, at + 1);
    if (end == std::string::npos) break;
    tokens.push_back(text.substr(at + 1, end - at - 1));
    at = end + 1;
  }
  return tokens;
}

}  // namespace room_outbox::testing
