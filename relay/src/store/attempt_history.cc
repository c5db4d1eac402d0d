#include "store/attempt_history.h"

#include <algorithm>
#include <charconv>
#include <chrono>

namespace room_outbox::relay {
namespace {

// A node_id as one field: its tabs and line ends become spaces.
std::string Field(std::string_view text) {
  std::string out(text);
  std::replace_if(
      out.begin(), out.end(), [](char c) { return c == '\t' || c == '\n' || c == '\r'; }, ' ');
  return out;
}

std::string Detail(const core::PublishOutcome& outcome) {
  if (outcome.im_error_code != 0) return "im " + std::to_string(outcome.im_error_code);
  if (outcome.http_status != 0) return "http " + std::to_string(outcome.http_status);
  return "-";
}

AttemptNote Note(std::string_view node_id, size_t pack_events, std::string_view outcome,
                 const std::string& detail, int64_t latency_ms) {
  AttemptNote note;
  note.known_at = std::chrono::steady_clock::now();
  note.text = Field(node_id) + '\t' + std::to_string(pack_events) + '\t' + std::string(outcome) +
              '\t' + detail + '\t' + std::to_string(latency_ms);
  return note;
}

std::vector<std::string_view> Split(std::string_view line, char by) {
  std::vector<std::string_view> parts;
  for (size_t at = 0;;) {
    const size_t end = line.find(by, at);
    parts.push_back(
        line.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at));
    if (end == std::string_view::npos) return parts;
    at = end + 1;
  }
}

bool ToInt(std::string_view text, int64_t& out) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size();
}

}  // namespace

int64_t AttemptNote::WaitedMs() const {
  const auto waited = std::chrono::steady_clock::now() - known_at;
  return std::max<int64_t>(0,
                           std::chrono::duration_cast<std::chrono::milliseconds>(waited).count());
}

AttemptNote NoteOfSend(std::string_view node_id, size_t pack_events,
                       const core::PublishOutcome& outcome) {
  return Note(node_id, pack_events, core::PublishStatusName(outcome.status), Detail(outcome),
              outcome.latency.count());
}

AttemptNote NoteOfSettlement(std::string_view node_id, std::string_view outcome) {
  return Note(node_id, 0, outcome, "-", 0);
}

core::Result<std::vector<AttemptEntry>> ParseAttempts(std::string_view text) {
  std::vector<AttemptEntry> entries;
  for (std::string_view line : Split(text, '\n')) {
    if (line.empty()) continue;
    const std::vector<std::string_view> f = Split(line, '\t');
    AttemptEntry e;
    if (f.size() != 6 || !ToInt(f[0], e.at_ms) || !ToInt(f[2], e.pack_events) ||
        !ToInt(f[5], e.latency_ms)) {
      return core::Fail(ErrorCode::kInternal,
                        "attempts: not an entry (at_ms, node_id, pack_events, outcome, detail, "
                        "latency_ms): \"" +
                            std::string(line.substr(0, 200)) + "\"");
    }
    e.node_id = std::string(f[1]);
    e.outcome = std::string(f[3]);
    e.detail = std::string(f[4]);
    entries.push_back(std::move(e));
  }
  return entries;
}

}  // namespace room_outbox::relay
