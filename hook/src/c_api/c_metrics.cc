// room_outbox_hook_metrics_get and room_outbox_hook_metrics_text (room_outbox/c.h): the hook's
// metrics over Hook::Metrics and HookMetricsText.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "c_api/c_objects.h"

using room_outbox::c_api::Guard;
using room_outbox::c_api::StoreError;
using room_outbox::c_api::StoreOk;

namespace {

room_outbox_hook_metrics CMetricsOf(const room_outbox::HookMetrics& m) {
  room_outbox_hook_metrics c{};
  c.commits_committed = m.commits_committed;
  c.commits_duplicate = m.commits_duplicate;
  c.commits_failed = m.commits_failed;
  c.commits_unknown = m.commits_unknown;
  c.sync_published = m.sync_published;
  c.sync_failed = m.sync_failed;
  c.sync_timeout = m.sync_timeout;
  c.sync_rate_limited = m.sync_rate_limited;
  c.sync_skipped_sync_off = m.sync_skipped_sync_off;
  c.sync_skipped_breaker_open = m.sync_skipped_breaker_open;
  c.sync_skipped_queue_full = m.sync_skipped_queue_full;
  c.sync_skipped_room_order = m.sync_skipped_room_order;
  c.sync_skipped_out_of_time = m.sync_skipped_out_of_time;
  c.sync_skipped_command_failed = m.sync_skipped_command_failed;
  c.rows_left_to_relay = m.rows_left_to_relay;
  c.commit_duration_count = m.commit_duration_count;
  c.commit_duration_sum_us = m.commit_duration_sum_us;
  c.sync_breaker_open = m.sync_breaker_open ? 1 : 0;
  c.sync_skipped_room_refused = m.sync_skipped_room_refused;
  c.late_marks_waiting = m.late_marks_waiting;
  c.late_marks_written = m.late_marks_written;
  c.late_marks_dropped = m.late_marks_dropped;
  c.events_committed = m.events_committed;
  c.publish_success = m.publish_success;
  return c;
}

}  // namespace

extern "C" {

room_outbox_status room_outbox_hook_metrics_get(const room_outbox_hook* hook,
                                                room_outbox_hook_metrics* out, size_t out_size,
                                                room_outbox_error** err) {
  constexpr const char* kWhere = "room_outbox_hook_metrics_get";
  return Guard(kWhere, err, [&] {
    if (hook == nullptr || out == nullptr) {
      return StoreError(err, ROOM_OUTBOX_INVALID_ARGUMENT, kWhere, "NULL hook or out");
    }
    const room_outbox_hook_metrics metrics = CMetricsOf(hook->hook->Metrics());
    std::memset(out, 0, out_size);
    std::memcpy(out, &metrics, std::min(out_size, sizeof(metrics)));
    return StoreOk(err);
  });
}

room_outbox_status room_outbox_hook_metrics_text(const room_outbox_hook* const* hooks,
                                                 size_t count, const char* hook_label,
                                                 size_t hook_label_len, char* buf, size_t cap,
                                                 size_t* len, room_outbox_error** err) {
  constexpr const char* kWhere = "room_outbox_hook_metrics_text";
  return Guard(kWhere, err, [&] {
    if ((hooks == nullptr && count > 0) || len == nullptr || (buf == nullptr && cap > 0) ||
        (hook_label == nullptr && hook_label_len > 0)) {
      return StoreError(err, ROOM_OUTBOX_INVALID_ARGUMENT, kWhere,
                        "NULL hooks, len, buf (with cap > 0) or hook_label (with a length)");
    }
    room_outbox::LabelledHookMetrics sum;
    for (size_t i = 0; i < count; ++i) {
      if (hooks[i] == nullptr) {
        return StoreError(err, ROOM_OUTBOX_INVALID_ARGUMENT, kWhere,
                          "hooks[" + std::to_string(i) + "] is NULL");
      }
      sum.metrics += hooks[i]->hook->Metrics();
    }
    if (hook_label_len > 0) sum.hook.assign(hook_label, hook_label_len);
    const std::string text = room_outbox::HookMetricsText({sum});
    *len = text.size();
    if (cap > 0) {
      const size_t n = std::min(text.size(), cap - 1);
      std::memcpy(buf, text.data(), n);
      buf[n] = '\0';
    }
    return StoreOk(err);
  });
}

}  // extern "C"
