// The benchmark report: one Markdown table (a row per measured figure, with the settings that
// produced it and its ratio to the figure it is compared with), then notes and text blocks such
// as EXPLAIN output. Benchmarks add to it; main prints it at the end.
#pragma once

#include <string>
#include <vector>

namespace room_outbox::bench {

struct ReportRow {
  std::string id;        // e.g. "1a"
  std::string what;      // what was measured
  std::string settings;  // exactly which settings produced it
  std::string result;    // the figure, with its unit
  std::string ratio;     // "x3.2 vs 1b" or empty
};

class Report {
 public:
  void Add(ReportRow row);
  void AddNote(std::string note);
  void AddBlock(std::string title, std::string text);

  // The table, then the notes as a list, then each block under its title in a code fence.
  std::string Markdown() const;

 private:
  struct Block {
    std::string title;
    std::string text;
  };
  std::vector<ReportRow> rows_;
  std::vector<std::string> notes_;
  std::vector<Block> blocks_;
};

}  // namespace room_outbox::bench
