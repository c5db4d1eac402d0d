// Logging under systemd: when stderr is connected to the journal, every line starts with its
// syslog priority ("<3>" error, "<4>" warning, "<6>" info, "<7>" debug and trace; sd-daemon(3)),
// which journald strips and stores as PRIORITY=, so `journalctl -p warning` works.
//
// systemd sets JOURNAL_STREAM="<st_dev>:<st_ino>" of the stream it connects; the prefix is used
// only when that names this process's stderr (a child that inherited the variable but writes
// elsewhere, e.g. to a file or a terminal, gets plain lines). journald adds the timestamps.
#pragma once

#include <spdlog/sinks/base_sink.h>

#include <memory>
#include <mutex>
#include <string_view>

#include "config/config.h"
#include "telemetry/log_line.h"

namespace room_outbox::relay {

// True when `journal_stream` ("dev:ino", decimal) names the file open on `fd`.
bool JournalStreamNames(std::string_view journal_stream, int fd);

// True when $JOURNAL_STREAM names stderr.
bool StderrIsJournal();

// "<N>" for an spdlog level.
std::string_view SyslogPrefix(spdlog::level::level_enum level);

// Writes formatted lines to stderr, each with its SyslogPrefix.
class JournalPrefixSink final : public spdlog::sinks::base_sink<std::mutex> {
 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override;
  void flush_() override;
};

// The relay's stderr logger: priority prefixes and no timestamps when stderr is the journal;
// otherwise what MakeStderrLogger gives.
std::unique_ptr<Logger> MakeRelayStderrLogger(const LogConfig& config);

}  // namespace room_outbox::relay
