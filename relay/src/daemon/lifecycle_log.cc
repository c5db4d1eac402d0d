#include "daemon/lifecycle_log.h"

#include <string>

#include "daemon/build_info.h"

namespace room_outbox::relay {

LogLine Lifecycle(std::string_view message, const Config& config) {
  LogLine line(message);
  line.Add("worker", "room_outbox").Add("node_id", config.node_id);
  return line;
}

LogLine StartingLine(const Config& config, bool once) {
  const WorkerConfig& w = config.outbox_worker;
  LogLine line = Lifecycle("outbox-relay starting", config);
  line.Add("version", Version())
      .Add("config", config.path)
      .Add("mode", once ? "once" : "daemon")
      .Add("poll_interval_ms", static_cast<int64_t>(w.poll_interval.count()))
      .Add("batch_size", static_cast<uint64_t>(w.batch_size))
      .Add("publish_timeout_ms", static_cast<int64_t>(w.publish_timeout.count()))
      .Add("retry_strategy", w.retry_strategy)
      .Add("max_in_flight", static_cast<uint64_t>(w.max_in_flight))
      .Add("ordering", w.ordering == Ordering::kPerRoom ? "per_room" : "none")
      .Add("lease_ms", static_cast<int64_t>(w.lease.count()))
      .Add("room_min_interval_ms", static_cast<int64_t>(w.room_min_interval.count()))
      .Add("im_endpoint", config.tencent_im.endpoint)
      .Add("mysql", config.mysql.socket.empty()
                        ? config.mysql.host + ":" + std::to_string(config.mysql.port)
                        : config.mysql.socket);
  return line;
}

}  // namespace room_outbox::relay
