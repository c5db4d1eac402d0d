#include "bench/report.h"

#include <sstream>
#include <utility>

namespace room_outbox::bench {
namespace {

// A cell must not break the table: pipes are escaped, newlines become spaces.
std::string Cell(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '|') {
      out += "\\|";
    } else if (c == '\n') {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

void Report::Add(ReportRow row) { rows_.push_back(std::move(row)); }

void Report::AddNote(std::string note) { notes_.push_back(std::move(note)); }

void Report::AddBlock(std::string title, std::string text) {
  blocks_.push_back(Block{std::move(title), std::move(text)});
}

std::string Report::Markdown() const {
  std::ostringstream out;
  out << "| # | Measured | Settings | Result | Ratio |\n";
  out << "|---|---|---|---|---|\n";
  for (const ReportRow& row : rows_) {
    out << "| " << Cell(row.id) << " | " << Cell(row.what) << " | " << Cell(row.settings) << " | "
        << Cell(row.result) << " | " << Cell(row.ratio) << " |\n";
  }
  if (!notes_.empty()) {
    out << "\nNotes:\n\n";
    for (const std::string& note : notes_) {
      out << "- " << note << "\n";
    }
  }
  for (const Block& block : blocks_) {
    out << "\n" << block.title << "\n\n```\n" << block.text;
    if (!block.text.empty() && block.text.back() != '\n') {
      out << "\n";
    }
    out << "```\n";
  }
  return out.str();
}

}  // namespace room_outbox::bench
