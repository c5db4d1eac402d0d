#include "support/exported_metrics.h"

#include <cctype>
#include <regex>
#include <sstream>

#include "room_outbox/hook_metrics.h"
#include "telemetry/health.h"
#include "telemetry/metrics.h"

namespace room_outbox::testing {
namespace {

// The text of a relay whose optional families are all on (an expiry table, skipped types, a
// heartbeat, a build) and of one unnamed Hook.
std::string RenderedText() {
  relay::Metrics metrics;
  metrics.DeclareExpiredTypes(std::map<std::string, int>{{"RoomGiftSent", 0}});
  metrics.DeclareSkippedTypes({"RoomHeatChanged"});
  metrics.SetBuildInfo("0.0.0", "test");
  relay::Heartbeat heartbeat;
  metrics.AttachHeartbeat(&heartbeat);
  return metrics.RenderPrometheus() + HookMetricsText({LabelledHookMetrics{"", HookMetrics{}}});
}

// PromQL's keywords and the words of its modifiers, which are no metric names.
bool Keyword(const std::string& word) {
  static const std::set<std::string> kWords = {
      "and",      "or",         "unless",      "bool", "offset", "by",  "without", "on",
      "ignoring", "group_left", "group_right", "inf",  "nan",    "Inf", "NaN"};
  return kWords.count(word) != 0;
}

}  // namespace

std::map<std::string, std::string> ExportedMetricFamilies() {
  std::map<std::string, std::string> families;
  std::istringstream in(RenderedText());
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string hash, type_word, name, type;
    if (words >> hash >> type_word >> name >> type && hash == "#" && type_word == "TYPE") {
      families[name] = type;
    }
  }
  return families;
}

std::set<std::string> ExportedSeriesNames() {
  std::set<std::string> names;
  for (const auto& [name, type] : ExportedMetricFamilies()) {
    names.insert(name);
    if (type == "histogram") {
      for (const char* suffix : {"_bucket", "_sum", "_count"}) names.insert(name + suffix);
    }
  }
  return names;
}

std::vector<std::string> PromqlMetricNames(std::string_view expr) {
  std::string text(expr);
  // Strings, label matchers, range and subquery durations, and Grafana's variables go first.
  for (const char* pattern : {R"("(?:[^"\\]|\\.)*")", R"('(?:[^'\\]|\\.)*')", R"(\{[^{}]*\})",
                              R"(\[[^\]]*\])", R"(\$\{[^}]*\}|\$[A-Za-z_][A-Za-z0-9_]*)"}) {
    text = std::regex_replace(text, std::regex(pattern), " ");
  }
  // The label lists of by/without/on/ignoring/group_left/group_right.
  text = std::regex_replace(
      text, std::regex(R"(\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\))"), " ");
  std::vector<std::string> names;
  static const std::regex kWord(R"([A-Za-z_:][A-Za-z0-9_:]*)");
  for (std::sregex_iterator it(text.begin(), text.end(), kWord), end; it != end; ++it) {
    const std::string word = it->str();
    const size_t after = it->position() + word.size();
    size_t next = after;
    while (next < text.size() && std::isspace(static_cast<unsigned char>(text[next]))) ++next;
    const bool call = next < text.size() && text[next] == '(';
    const bool number_part =
        it->position() > 0 && std::isdigit(static_cast<unsigned char>(text[it->position() - 1]));
    if (call || number_part || Keyword(word)) continue;
    names.push_back(word);
  }
  return names;
}

std::vector<std::string> UnknownMetricsIn(
    const std::vector<std::pair<std::string, std::string>>& exprs) {
  const std::set<std::string> exported = ExportedSeriesNames();
  std::vector<std::string> problems;
  for (const auto& [where, expr] : exprs) {
    const std::vector<std::string> names = PromqlMetricNames(expr);
    if (names.empty()) problems.push_back(where + ": selects no metric: " + expr);
    for (const std::string& name : names) {
      if (name != "up" && exported.count(name) == 0) {
        problems.push_back(where + ": " + name + " is not a metric the relay or the hook exports");
      }
    }
  }
  return problems;
}

}  // namespace room_outbox::testing
