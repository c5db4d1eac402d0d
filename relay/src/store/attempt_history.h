// A row's attempt history (schema 011, room_outbox.attempts and attempt_count): the one home of
// its entry format, written by the worker's marks (AttemptNote, relay_store.h) and read by
// `outbox-relay show`. An entry is one line:
//   <at_ms> \t <node_id> \t <pack_events> \t <outcome> \t <detail> \t <latency_ms>
// at_ms is the database server's time the outcome was known (the mark writes it); the rest is the
// note's text. outcome is one of kAttemptOutcomes; detail the IM ErrorCode ("im 60007"), else the
// HTTP status ("http 503"), else "-". The column keeps the last kAttemptsKept entries (the SQL of
// the marks, core/mysql/outbox_sql.h, cuts it), attempt_count counts them all.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/publisher.h"
#include "core/result.h"
#include "store/relay_store.h"

namespace room_outbox::relay {

inline constexpr size_t kAttemptsKept = 16;

// Every outcome an entry names: a send's PublishStatus (core::PublishStatusName), or a row settled
// without one.
inline constexpr std::array<std::string_view, 9> kAttemptOutcomes = {
    "published",     "retryable",   "rate_limited", "unknown", "permanent",
    "not_attempted", "undecodable", "skipped",      "expired"};

// The note of a send of `row` in a message of `pack_events` events, known now.
AttemptNote NoteOfSend(std::string_view node_id, size_t pack_events,
                       const core::PublishOutcome& outcome);
// The note of a row settled without a send: `outcome` is "undecodable", "skipped" or "expired".
AttemptNote NoteOfSettlement(std::string_view node_id, std::string_view outcome);

// One entry as read back.
struct AttemptEntry {
  int64_t at_ms = 0;
  std::string node_id;
  int64_t pack_events = 0;
  std::string outcome;
  std::string detail;
  int64_t latency_ms = 0;
};

// The entries of an `attempts` column, oldest first. A line that is not an entry fails with
// kInternal naming it (the column is written by the relay only).
core::Result<std::vector<AttemptEntry>> ParseAttempts(std::string_view text);

}  // namespace room_outbox::relay
