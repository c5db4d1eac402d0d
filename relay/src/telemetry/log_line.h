// Structured log lines: a message plus key=value fields, rendered as text or JSON by [log] format,
// written through spdlog. spdlog 1.10 has no structured fields of its own, so the fields are
// rendered here and spdlog only adds level and time.
//
//   text: message key=value key="value with spaces" ...
//   json: {"ts":"...","level":"info","msg":"message","key":"value",...}
//
// Thread-safety: Logger is as thread-safe as its spdlog logger (the relay uses the _mt sinks).
#pragma once

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <spdlog/spdlog.h>


namespace room_outbox::relay {

// [log] format.
enum class LogFormat {
  kText,  // message key=value key="value with spaces"
  kJson,  // one JSON object per line
};

// [log]
struct LogConfig {
  std::string level = "info";  // trace, debug, info, warn, error
  LogFormat format = LogFormat::kText;
};

class LogLine {
 public:
  explicit LogLine(std::string_view message) : message_(message) {}

  LogLine& Add(std::string_view key, std::string_view value);
  LogLine& Add(std::string_view key, const char* value) { return Add(key, std::string_view(value)); }
  LogLine& Add(std::string_view key, const std::string& value) {
    return Add(key, std::string_view(value));
  }
  LogLine& Add(std::string_view key, int64_t value);
  LogLine& Add(std::string_view key, uint64_t value);
  LogLine& Add(std::string_view key, int value) { return Add(key, static_cast<int64_t>(value)); }
  LogLine& Add(std::string_view key, bool value);

  // Text: values with spaces, quotes, '=' or control characters (or empty ones) are quoted with
  // backslash escapes. JSON: one object with "msg" first, then the fields in insertion order;
  // `prefix` fields (e.g. ts, level) go before "msg".
  std::string Render(LogFormat format,
                     const std::vector<std::pair<std::string, std::string>>& prefix = {}) const;

 private:
  struct Field {
    std::string key;
    std::string value;
    bool number = false;   // JSON number
    bool boolean = false;  // JSON true/false
  };
  std::string message_;
  std::vector<Field> fields_;
};

// The one outcome line per outbox row, with the required fields in this order: node_id, event_id,
// event_type, room_id, retry_count, status, error.
struct OutboxEventFields {
  std::string_view node_id;
  std::string_view event_id;
  std::string_view event_type;
  std::string_view room_id;
  int64_t retry_count = 0;
  std::string_view status;  // "published" or "pending"
  std::string_view error;   // empty when delivered
};
LogLine OutboxEventLine(std::string_view message, const OutboxEventFields& fields);

class Logger {
 public:
  // `timestamps`: false under journald, which stamps lines itself.
  Logger(std::shared_ptr<spdlog::logger> logger, LogFormat format, bool timestamps);

  bool ShouldLog(spdlog::level::level_enum level) const { return logger_->should_log(level); }
  void Log(spdlog::level::level_enum level, const LogLine& line);
  void Trace(const LogLine& line) { Log(spdlog::level::trace, line); }
  void Debug(const LogLine& line) { Log(spdlog::level::debug, line); }
  void Info(const LogLine& line) { Log(spdlog::level::info, line); }
  void Warn(const LogLine& line) { Log(spdlog::level::warn, line); }
  void Error(const LogLine& line) { Log(spdlog::level::err, line); }
  void SetLevel(spdlog::level::level_enum level) { logger_->set_level(level); }

 private:
  std::shared_ptr<spdlog::logger> logger_;
  LogFormat format_;
  bool timestamps_;
};

// Maps trace/debug/info/warn/error to spdlog's levels (info for anything else).
spdlog::level::level_enum ParseLogLevel(const std::string& level);

// A logger writing to stderr; no timestamps when JOURNAL_STREAM is set (running under systemd).
std::unique_ptr<Logger> MakeStderrLogger(const LogConfig& config);

// A logger writing to `out` (tests capture lines with it).
std::unique_ptr<Logger> MakeStreamLogger(std::ostream& out, LogFormat format,
                                         spdlog::level::level_enum level);

}  // namespace room_outbox::relay
