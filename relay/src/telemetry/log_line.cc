#include "telemetry/log_line.h"

#include <cstdlib>

#include <nlohmann/json.hpp>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/sinks/stdout_sinks.h>

namespace room_outbox::relay {
namespace {

bool NeedsQuotes(std::string_view value) {
  if (value.empty()) {
    return true;
  }
  for (char ch : value) {
    const auto c = static_cast<unsigned char>(ch);
    if (c <= 0x20 || c == 0x7f || ch == '"' || ch == '=' || ch == '\\') {
      return true;
    }
  }
  return false;
}

std::string QuoteText(std::string_view value) {
  std::string out = "\"";
  for (char ch : value) {
    switch (ch) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f) {
          // Any other control byte (NUL, ESC of a terminal sequence, DEL) as \xNN.
          static constexpr char kHex[] = "0123456789abcdef";
          const auto c = static_cast<unsigned char>(ch);
          out += {'\\', 'x', kHex[c >> 4], kHex[c & 0xf]};
        } else {
          out += ch;
        }
    }
  }
  return out + "\"";
}

}  // namespace

LogLine& LogLine::Add(std::string_view key, std::string_view value) {
  fields_.push_back(Field{std::string(key), std::string(value), false});
  return *this;
}

LogLine& LogLine::Add(std::string_view key, int64_t value) {
  fields_.push_back(Field{std::string(key), std::to_string(value), true});
  return *this;
}

LogLine& LogLine::Add(std::string_view key, bool value) {
  fields_.push_back(Field{std::string(key), value ? "true" : "false", false, true});
  return *this;
}

LogLine& LogLine::Add(std::string_view key, uint64_t value) {
  fields_.push_back(Field{std::string(key), std::to_string(value), true});
  return *this;
}

std::string LogLine::Render(LogFormat format,
                            const std::vector<std::pair<std::string, std::string>>& prefix) const {
  if (format == LogFormat::kJson) {
    // ordered_json keeps insertion order, so "msg" and the identifiers come first.
    nlohmann::ordered_json j;
    for (const auto& [k, v] : prefix) {
      j[k] = v;
    }
    j["msg"] = message_;
    for (const Field& f : fields_) {
      if (f.boolean) {
        j[f.key] = f.value == "true";
      } else if (f.number) {
        // Never throws: the text came from std::to_string of an integer.
        j[f.key] = nlohmann::json::parse(f.value, nullptr, /*allow_exceptions=*/false);
      } else {
        j[f.key] = f.value;
      }
    }
    // Replace invalid UTF-8 instead of throwing: a log line must never fail.
    return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
  std::string out = message_;
  for (const Field& f : fields_) {
    out += ' ';
    out += f.key;
    out += '=';
    out += NeedsQuotes(f.value) ? QuoteText(f.value) : f.value;
  }
  return out;
}

LogLine OutboxEventLine(std::string_view message, const OutboxEventFields& f) {
  LogLine line(message);
  line.Add("worker", "room_outbox")
      .Add("node_id", f.node_id)
      .Add("event_id", f.event_id)
      .Add("event_type", f.event_type)
      .Add("room_id", f.room_id)
      .Add("retry_count", f.retry_count)
      .Add("status", f.status)
      .Add("error", f.error);
  return line;
}

Logger::Logger(std::shared_ptr<spdlog::logger> logger, LogFormat format, bool timestamps)
    : logger_(std::move(logger)), format_(format), timestamps_(timestamps) {
  if (format_ == LogFormat::kJson) {
    // Time and level are fields of the JSON object; spdlog writes the rendered line only.
    logger_->set_pattern("%v");
  } else if (timestamps_) {
    logger_->set_pattern("%Y-%m-%dT%H:%M:%S.%e%z %l %v");
  } else {
    logger_->set_pattern("%l %v");
  }
}

void Logger::Log(spdlog::level::level_enum level, const LogLine& line) {
  if (!logger_->should_log(level)) {
    return;
  }
  if (format_ == LogFormat::kJson) {
    std::vector<std::pair<std::string, std::string>> prefix;
    if (timestamps_) {
      const auto now = std::chrono::system_clock::now();
      const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                          now.time_since_epoch()) % 1000;
      const std::time_t t = std::chrono::system_clock::to_time_t(now);
      std::tm tm{};
      gmtime_r(&t, &tm);
      char buf[40];
      std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
      char full[48];
      std::snprintf(full, sizeof(full), "%s.%03dZ", buf, static_cast<int>(ms.count()));
      prefix.emplace_back("ts", full);
    }
    const auto level_name = spdlog::level::to_string_view(level);
    prefix.emplace_back("level", std::string(level_name.data(), level_name.size()));
    logger_->log(level, "{}", line.Render(format_, prefix));
  } else {
    logger_->log(level, "{}", line.Render(format_));
  }
  if (level >= spdlog::level::warn) {
    logger_->flush();
  }
}

spdlog::level::level_enum ParseLogLevel(const std::string& level) {
  if (level == "trace") return spdlog::level::trace;
  if (level == "debug") return spdlog::level::debug;
  if (level == "warn") return spdlog::level::warn;
  if (level == "error") return spdlog::level::err;
  return spdlog::level::info;
}

std::unique_ptr<Logger> MakeStderrLogger(const LogConfig& config) {
  auto sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
  auto logger = std::make_shared<spdlog::logger>("outbox-relay", std::move(sink));
  logger->set_level(ParseLogLevel(config.level));
  const char* journal = std::getenv("JOURNAL_STREAM");
  const bool under_journald = journal != nullptr && journal[0] != '\0';
  return std::make_unique<Logger>(std::move(logger), config.format, !under_journald);
}

std::unique_ptr<Logger> MakeStreamLogger(std::ostream& out, LogFormat format,
                                         spdlog::level::level_enum level) {
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(out, /*force_flush=*/true);
  auto logger = std::make_shared<spdlog::logger>("test", std::move(sink));
  logger->set_level(level);
  return std::make_unique<Logger>(std::move(logger), format, /*timestamps=*/false);
}

}  // namespace room_outbox::relay
