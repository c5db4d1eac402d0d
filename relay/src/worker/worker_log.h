// WorkerLine: a log line of the relay loop, with the fields every one of them carries (worker,
// node_id).
#pragma once

#include <string_view>

#include "telemetry/log_line.h"

namespace room_outbox::relay {

inline LogLine WorkerLine(std::string_view node_id, std::string_view message) {
  LogLine line(message);
  line.Add("worker", "room_outbox").Add("node_id", node_id);
  return line;
}

}  // namespace room_outbox::relay
