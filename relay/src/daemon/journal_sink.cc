#include "daemon/journal_sink.h"

#include <sys/stat.h>
#include <unistd.h>

#include <charconv>
#include <cstdio>
#include <cstdlib>

namespace room_outbox::relay {
namespace {

bool ParseUnsigned(std::string_view text, unsigned long long* out) {
  if (text.empty()) return false;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && ptr == text.data() + text.size();
}

}  // namespace

bool JournalStreamNames(std::string_view journal_stream, int fd) {
  const size_t colon = journal_stream.find(':');
  if (colon == std::string_view::npos) return false;
  unsigned long long dev = 0;
  unsigned long long ino = 0;
  if (!ParseUnsigned(journal_stream.substr(0, colon), &dev) ||
      !ParseUnsigned(journal_stream.substr(colon + 1), &ino)) {
    return false;
  }
  struct stat st {};
  if (fstat(fd, &st) != 0) return false;
  return static_cast<unsigned long long>(st.st_dev) == dev &&
         static_cast<unsigned long long>(st.st_ino) == ino;
}

bool StderrIsJournal() {
  const char* value = std::getenv("JOURNAL_STREAM");
  return value != nullptr && JournalStreamNames(value, STDERR_FILENO);
}

std::string_view SyslogPrefix(spdlog::level::level_enum level) {
  switch (level) {
    case spdlog::level::critical:
      return "<2>";
    case spdlog::level::err:
      return "<3>";
    case spdlog::level::warn:
      return "<4>";
    case spdlog::level::info:
      return "<6>";
    default:
      return "<7>";  // debug, trace
  }
}

void JournalPrefixSink::sink_it_(const spdlog::details::log_msg& msg) {
  spdlog::memory_buf_t formatted;
  formatter_->format(msg, formatted);
  const std::string_view prefix = SyslogPrefix(msg.level);
  // One write per line, so lines of several threads never interleave inside the journal's
  // line reader (the mutex of base_sink orders the writes).
  std::string line;
  line.reserve(prefix.size() + formatted.size());
  line.append(prefix);
  line.append(formatted.data(), formatted.size());
  (void)std::fwrite(line.data(), 1, line.size(), stderr);  // nowhere to report a failed write
}

void JournalPrefixSink::flush_() { (void)std::fflush(stderr); }

std::unique_ptr<Logger> MakeRelayStderrLogger(const LogConfig& config) {
  if (!StderrIsJournal()) {
    return MakeStderrLogger(config);
  }
  auto logger =
      std::make_shared<spdlog::logger>("outbox-relay", std::make_shared<JournalPrefixSink>());
  logger->set_level(ParseLogLevel(config.level));
  return std::make_unique<Logger>(std::move(logger), config.format, /*timestamps=*/false);
}

}  // namespace room_outbox::relay
