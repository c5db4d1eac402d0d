#include "sync_hand_back.h"

namespace room_outbox::internal {

bool HandBackSyncRows(HookStore& store, const std::string& token,
                      const std::vector<int64_t>& delivered, const std::vector<int64_t>& left,
                      std::string_view what, const LogCallback& log, LateMarks* late_marks,
                      const FailedPack& failed_pack) {
  auto warn = [&](const std::string& line) {
    if (log) log(LogLevel::kWarn, line);
  };
  bool mark_failed = false;
  if (!delivered.empty()) {
    if (auto marked = store.MarkPublished(token, delivered); !marked) {
      mark_failed = true;
      if (late_marks != nullptr) {
        late_marks->Keep(token, delivered);
        warn("mark published after " + std::string(what) + " failed, kept to be written when " +
             "the database answers again: rows=" + std::to_string(delivered.size()) +
             " error=" + marked.error().message);
      } else {
        warn("mark published after " + std::string(what) +
             " failed (may be sent again): " + marked.error().message);
      }
    }
  }
  if (failed_pack.events > 1) {
    if (auto recorded =
            store.RecordPackSize(token, failed_pack.first_row_id, failed_pack.events);
        !recorded) {
      warn("pack size after " + std::string(what) + " failed (the relay may pack the row " +
           "differently): " + recorded.error().message);
    }
  }
  if (!left.empty()) {
    if (auto released = store.Release(token, left); !released) {
      warn("release after " + std::string(what) +
           " failed (due when the lease ends): " + released.error().message);
    }
  }
  return mark_failed;
}

}  // namespace room_outbox::internal
