// The outline of an AsciiDoc man page source (docs/*.adoc) as our pages are written: sections
// and their description-list items. Enough to tell which options, commands and config keys a
// page documents; not a general AsciiDoc parser.
#pragma once

#include <string>
#include <vector>

namespace room_outbox::testing {

// One description-list item: `term::` (or `term:: text`) and the lines after it up to a blank
// line or the next term, joined with spaces.
struct AdocItem {
  std::string term;
  std::string body;
};

// A section: its heading level (2 for `==`, 3 for `===`), its title, and the items between its
// heading and the next heading of any level.
struct AdocSection {
  int level = 0;
  std::string title;
  std::vector<AdocItem> items;
};

// The sections of `text` in order. Lines inside `----` listing blocks are skipped.
std::vector<AdocSection> ReadAdocOutline(const std::string& text);

// The sections below the level-2 section titled `title` (itself first), up to the next level-2
// section. Empty when there is none.
std::vector<AdocSection> SectionsUnder(const std::vector<AdocSection>& outline,
                                       const std::string& title);

// The tokens of `text` written between `open` and `close`, e.g. ("*--a* _X_, *-b*", '*', '*')
// -> {"--a", "-b"}.
std::vector<std::string> Marked(const std::string& text, char open, char close);

}  // namespace room_outbox::testing
