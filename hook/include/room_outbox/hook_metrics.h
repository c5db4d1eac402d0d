// The hook's metrics: what one Hook counted since it was created, and their Prometheus text, so a
// room service can serve them on its own /metrics (docs/hook.md, "Metrics").
//
//   room_outbox_hook_commits_total{outcome}          counter  Commit calls by CommitStatus:
//                                                             committed|duplicate|failed|unknown
//   room_outbox_hook_sync_publishes_total{outcome}   counter  IM requests of the sync publish
//                                                             (inline or background) by outcome:
//                                                             published|failed|timeout|rate_limited
//   room_outbox_hook_sync_skipped_total{reason}      counter  pending events the sync publish did
//                                                             not try: sync_off|breaker_open|
//                                                             queue_full|room_order|out_of_time|
//                                                             command_failed|room_refused
//   room_outbox_hook_sync_breaker_open               gauge    1 while the sync breaker is open or
//                                                             half-open (process-wide per IM app)
//   room_outbox_hook_rows_left_to_relay_total        counter  committed pending rows the hook left
//                                                             for outbox-relay
//   room_outbox_hook_late_marks_waiting              gauge    rows IM took whose mark published
//                                                             failed, kept to be written later
//   room_outbox_hook_late_marks_written_total        counter  rows such a late mark marked
//   room_outbox_hook_late_marks_dropped_total        counter  waiting marks dropped at the bound
//                                                             (those rows may be sent again)
//   room_outbox_hook_commit_duration_seconds         histogram  time in Commit, sync publish
//                                                             included (what the caller waits)
//   room_outbox_hook_events_committed_total          counter  events committed commands wrote
//                                                             pending (to be sent to IM)
//   room_outbox_hook_publish_success_total           counter  events IM accepted from the sync
//                                                             publish (a pack counts its events)
//
// Every sample carries the label hook="<name>" when the caller names the Hook (MetricsText), so
// several Hooks of one process, or a room service that also runs a relay, never share a series.
// The room_outbox_hook_ prefix keeps the hook's families apart from the relay's room_outbox_.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "room_outbox/export.h"

namespace room_outbox {

struct HookMetrics {
  // Upper bounds of the commit duration buckets, in microseconds (written in seconds); a +Inf
  // bucket follows.
  static constexpr std::array<int64_t, 13> kCommitDurationBucketsUs = {
      1000, 2500, 5000, 10000, 25000, 50000, 100000, 250000, 500000,
      1000000, 2500000, 5000000, 10000000};

  // Commit calls by CommitStatus (a Commit refused as misuse, or by the commit-time checks, is
  // failed).
  uint64_t commits_committed = 0;
  uint64_t commits_duplicate = 0;
  uint64_t commits_failed = 0;
  uint64_t commits_unknown = 0;
  // IM requests of the sync publish by outcome: IM took it (or it is a type not sent to IM);
  // no answer in time or the connection dropped after the request went out (IM may have it); a
  // frequency limit or no request budget in time; any other refusal or failure (HTTP, IM error,
  // the publisher's own app breaker open).
  uint64_t sync_published = 0;
  uint64_t sync_failed = 0;
  uint64_t sync_timeout = 0;
  uint64_t sync_rate_limited = 0;
  // Pending events the sync publish did not try, by reason: [hook] sync_publish = "off"; the
  // sync breaker open; the background queue full; an earlier event of the room still pending or
  // left to the relay (per-room order); the command's sync_publish_timeout spent; an earlier
  // event of the same command failed; the room's group refused a message for IM's frequency
  // control and the hook backs off that room (1 s doubling to 16 s, cleared by a delivery).
  uint64_t sync_skipped_sync_off = 0;
  uint64_t sync_skipped_breaker_open = 0;
  uint64_t sync_skipped_queue_full = 0;
  uint64_t sync_skipped_room_order = 0;
  uint64_t sync_skipped_out_of_time = 0;
  uint64_t sync_skipped_command_failed = 0;
  uint64_t sync_skipped_room_refused = 0;
  // The sync breaker this Hook uses is open or half-open (it is shared by the process's Hooks
  // aimed at the same IM app).
  bool sync_breaker_open = false;
  // Committed pending rows the hook left for outbox-relay: written due at once, released after
  // a failed or untried sync publish, or (a store fault) left to their lease's end.
  uint64_t rows_left_to_relay = 0;
  // Marks published the hook could not write after IM took the rows (the connection dropped
  // between the publish and the mark): waiting now (a gauge), written later (before a later
  // Commit's transaction, or by the background thread), dropped because 10,000 were waiting (the
  // relay may send those rows again after their lease: a duplicate, never a loss).
  uint64_t late_marks_waiting = 0;
  uint64_t late_marks_written = 0;
  uint64_t late_marks_dropped = 0;
  // Commit duration: per-bucket (non-cumulative) counts, the +Inf bucket last; the sum in
  // microseconds.
  std::array<uint64_t, kCommitDurationBucketsUs.size() + 1> commit_duration_buckets{};
  uint64_t commit_duration_count = 0;
  uint64_t commit_duration_sum_us = 0;
  // Events of committed commands written pending, to be sent to IM by the sync publish or the
  // relay (the events of skip_event_types, written published, are not counted): what arrives in
  // the outbox from this Hook.
  uint64_t events_committed = 0;
  // Events IM accepted from this Hook's sync publish, inline or background: a pack of n events
  // (pack_max_events) counts n, where sync_published counts its one request.
  uint64_t publish_success = 0;

  // Adds `other` to this snapshot (the breaker gauge: open if either is), e.g. to report a pool
  // of Hooks as one.
  HookMetrics& operator+=(const HookMetrics& other) {
    commits_committed += other.commits_committed;
    commits_duplicate += other.commits_duplicate;
    commits_failed += other.commits_failed;
    commits_unknown += other.commits_unknown;
    sync_published += other.sync_published;
    sync_failed += other.sync_failed;
    sync_timeout += other.sync_timeout;
    sync_rate_limited += other.sync_rate_limited;
    sync_skipped_sync_off += other.sync_skipped_sync_off;
    sync_skipped_breaker_open += other.sync_skipped_breaker_open;
    sync_skipped_queue_full += other.sync_skipped_queue_full;
    sync_skipped_room_order += other.sync_skipped_room_order;
    sync_skipped_out_of_time += other.sync_skipped_out_of_time;
    sync_skipped_command_failed += other.sync_skipped_command_failed;
    sync_skipped_room_refused += other.sync_skipped_room_refused;
    sync_breaker_open = sync_breaker_open || other.sync_breaker_open;
    rows_left_to_relay += other.rows_left_to_relay;
    late_marks_waiting += other.late_marks_waiting;
    late_marks_written += other.late_marks_written;
    late_marks_dropped += other.late_marks_dropped;
    for (size_t i = 0; i < commit_duration_buckets.size(); ++i) {
      commit_duration_buckets[i] += other.commit_duration_buckets[i];
    }
    commit_duration_count += other.commit_duration_count;
    commit_duration_sum_us += other.commit_duration_sum_us;
    events_committed += other.events_committed;
    publish_success += other.publish_success;
    return *this;
  }
};

// One Hook's snapshot and the value of its hook label (empty: no label).
struct LabelledHookMetrics {
  std::string hook;
  HookMetrics metrics;
};

// The Prometheus text exposition (format 0.0.4) of the snapshots: each family once (HELP, TYPE),
// with one series per snapshot, labelled hook="<hook>" when its hook is not empty. Give each
// snapshot a distinct hook (or sum them with += first): two snapshots with the same hook would
// repeat a series. Text of several calls must not be concatenated (a family may appear once in
// a scrape); render every Hook of the process in one call.
ROOM_OUTBOX_EXPORT std::string HookMetricsText(const std::vector<LabelledHookMetrics>& hooks);

}  // namespace room_outbox
