#include "daemon/read_only_watch.h"

#include "core/mysql/mysql_error.h"

namespace room_outbox::relay {

void ReadOnlyWatch::Observe(const Error* error) {
  std::lock_guard<std::mutex> lock(mu_);
  if (error != nullptr && core::IsReadOnlyRefusal(*error)) {
    ++refusals_;
    if (!in_episode_) {
      in_episode_ = true;
      started_ms_ = clock_.SteadyMs();
      logger_.Warn(
          Line("database is read-only: nothing is claimed or marked until it accepts writes")
              .Add("error", error->message));
    }
    metrics_.SetDbReadOnly(error->message);
    return;
  }
  if (error != nullptr) {
    // Away, or failing otherwise: db_up and /readyz say so; the episode goes on.
    metrics_.SetDbReadOnly("");
    return;
  }
  if (in_episode_) {
    logger_.Info(Line("database accepts writes again")
                     .Add("read_only_ms", clock_.SteadyMs() - started_ms_)
                     .Add("refusals", refusals_));
    in_episode_ = false;
    refusals_ = 0;
  }
  metrics_.SetDbReadOnly("");
}

bool ReadOnlyWatch::in_episode() const {
  std::lock_guard<std::mutex> lock(mu_);
  return in_episode_;
}

LogLine ReadOnlyWatch::Line(const char* message) const {
  LogLine line(message);
  line.Add("worker", "room_outbox").Add("node_id", node_id_);
  return line;
}

}  // namespace room_outbox::relay
