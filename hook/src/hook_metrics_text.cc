// HookMetricsText (room_outbox/hook_metrics.h): the hook's metrics in the Prometheus text format.
#include <cstdint>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "core/prometheus_text.h"
#include "room_outbox/hook_metrics.h"

namespace room_outbox {
namespace {

using Hooks = std::vector<LabelledHookMetrics>;

// `hook="<name>",` for a named Hook, else nothing: the labels before a family's own.
std::string HookLabel(const LabelledHookMetrics& hook) {
  return hook.hook.empty() ? "" : "hook=\"" + core::prom::LabelValue(hook.hook) + "\",";
}

void Header(std::ostream& out, const char* name, const char* type, const char* help) {
  out << "# HELP " << name << ' ' << help << "\n# TYPE " << name << ' ' << type << '\n';
}

// One family with a label of its own: every value of `label` for every Hook.
template <class Field>
void ByLabel(std::ostream& out, const Hooks& hooks, const char* name, const char* help,
             const char* label, const std::vector<std::pair<const char*, Field>>& values) {
  Header(out, name, "counter", help);
  for (const LabelledHookMetrics& hook : hooks) {
    const std::string prefix = HookLabel(hook);
    for (const auto& [value, field] : values) {
      out << name << '{' << prefix << label << "=\"" << value << "\"} " << hook.metrics.*field
          << '\n';
    }
  }
}

// One family without a label of its own: one sample per Hook.
template <class Value>
void PerHook(std::ostream& out, const Hooks& hooks, const char* name, const char* type,
             const char* help, Value value) {
  Header(out, name, type, help);
  for (const LabelledHookMetrics& hook : hooks) {
    std::string labels = HookLabel(hook);
    if (!labels.empty()) labels = '{' + labels.substr(0, labels.size() - 1) + '}';
    out << name << labels << ' ' << value(hook.metrics) << '\n';
  }
}

using Counter = uint64_t HookMetrics::*;

void RenderCommits(std::ostream& out, const Hooks& hooks) {
  ByLabel<Counter>(out, hooks, "room_outbox_hook_commits_total", "Commit calls by outcome.",
                   "outcome",
                   {{"committed", &HookMetrics::commits_committed},
                    {"duplicate", &HookMetrics::commits_duplicate},
                    {"failed", &HookMetrics::commits_failed},
                    {"unknown", &HookMetrics::commits_unknown}});
}

void RenderSync(std::ostream& out, const Hooks& hooks) {
  ByLabel<Counter>(out, hooks, "room_outbox_hook_sync_publishes_total",
                   "IM requests of the hook's sync publish by outcome.", "outcome",
                   {{"published", &HookMetrics::sync_published},
                    {"failed", &HookMetrics::sync_failed},
                    {"timeout", &HookMetrics::sync_timeout},
                    {"rate_limited", &HookMetrics::sync_rate_limited}});
  ByLabel<Counter>(out, hooks, "room_outbox_hook_sync_skipped_total",
                   "Pending events the sync publish did not try, by reason.", "reason",
                   {{"sync_off", &HookMetrics::sync_skipped_sync_off},
                    {"breaker_open", &HookMetrics::sync_skipped_breaker_open},
                    {"queue_full", &HookMetrics::sync_skipped_queue_full},
                    {"room_order", &HookMetrics::sync_skipped_room_order},
                    {"out_of_time", &HookMetrics::sync_skipped_out_of_time},
                    {"command_failed", &HookMetrics::sync_skipped_command_failed},
                    {"room_refused", &HookMetrics::sync_skipped_room_refused}});
  PerHook(out, hooks, "room_outbox_hook_sync_breaker_open", "gauge",
          "1 while the sync publish breaker is open or half-open.",
          [](const HookMetrics& m) { return m.sync_breaker_open ? 1 : 0; });
  PerHook(out, hooks, "room_outbox_hook_rows_left_to_relay_total", "counter",
          "Committed pending rows the hook left for outbox-relay.",
          [](const HookMetrics& m) { return m.rows_left_to_relay; });
}

// What arrives in the outbox from the Hooks and what their sync publish delivered, in events.
void RenderEvents(std::ostream& out, const Hooks& hooks) {
  PerHook(out, hooks, "room_outbox_hook_events_committed_total", "counter",
          "Events of committed commands written pending, to be sent to IM.",
          [](const HookMetrics& m) { return m.events_committed; });
  PerHook(out, hooks, "room_outbox_hook_publish_success_total", "counter",
          "Events Tencent IM accepted from the sync publish (a pack counts its events).",
          [](const HookMetrics& m) { return m.publish_success; });
}

void RenderLateMarks(std::ostream& out, const Hooks& hooks) {
  PerHook(out, hooks, "room_outbox_hook_late_marks_waiting", "gauge",
          "Rows IM took whose mark published failed, waiting to be written.",
          [](const HookMetrics& m) { return m.late_marks_waiting; });
  PerHook(out, hooks, "room_outbox_hook_late_marks_written_total", "counter",
          "Rows marked published late, once the database answered again.",
          [](const HookMetrics& m) { return m.late_marks_written; });
  PerHook(out, hooks, "room_outbox_hook_late_marks_dropped_total", "counter",
          "Waiting marks dropped at the bound (the relay may send those rows again).",
          [](const HookMetrics& m) { return m.late_marks_dropped; });
}

void RenderDuration(std::ostream& out, const Hooks& hooks) {
  constexpr const char* kName = "room_outbox_hook_commit_duration_seconds";
  bool first = true;
  for (const LabelledHookMetrics& hook : hooks) {
    std::ostringstream family;
    core::prom::Histogram(family, kName, "Time spent in Commit, sync publish included.",
                          HookMetrics::kCommitDurationBucketsUs,
                          hook.metrics.commit_duration_buckets,
                          core::prom::Decimal(static_cast<int64_t>(hook.metrics.commit_duration_sum_us),
                                              1000000),
                          hook.metrics.commit_duration_count, 1000000, HookLabel(hook));
    std::string text = family.str();
    if (!first) text.erase(0, text.find('\n', text.find('\n') + 1) + 1);  // HELP, TYPE once
    out << text;
    first = false;
  }
}

}  // namespace

std::string HookMetricsText(const std::vector<LabelledHookMetrics>& hooks) {
  std::ostringstream out;
  RenderCommits(out, hooks);
  RenderSync(out, hooks);
  RenderEvents(out, hooks);
  RenderLateMarks(out, hooks);
  RenderDuration(out, hooks);
  return out.str();
}

}  // namespace room_outbox
