// ResultWriter: writes one claim's results back with its token and logs one line per row.
//
// The worker reports each row's outcome (Delivered / Failed) as it learns it; Flush, called
// after every wave, writes what was gathered since the last call: one MarkPublished and one
// MarkFailed. A relay killed mid-claim therefore leaves at most its last wave delivered but
// unmarked. Then one outcome line per row (written after the marks, so that `status` says what
// the database holds) with worker, node_id, event_id, event_type, room_id, retry_count, status
// and error. Release gives back rows that were not attempted (due at once, retry_count
// unchanged). A mark that counts fewer rows than asked means the lease ran out and another
// claim holds them now (its result counts): a warning, not an error. A failing store call is an
// error of the round (store_error), logged at error.
//
// Failed attempts carry a delay; the store adds it to the database server's clock at the mark.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "log_line.h"
#include "metrics.h"
#include "outbox_store.h"
#include "retry_policy.h"

namespace room_outbox::relay {

class ResultWriter {
 public:
  ResultWriter(OutboxStore& store, Metrics& metrics, Logger& logger,
               std::string node_id, std::string token);

  void Delivered(const OutboxRow& row);
  void Failed(const OutboxRow& row, AttemptVerdict verdict);

  // Writes and logs the results gathered since the last call.
  void Flush();
  // Gives back rows that were not attempted (one Release).
  void Release(std::span<const int64_t> ids);

  size_t published() const { return published_; }  // recorded as published in the database
  size_t failed() const { return failed_; }        // failed attempts (marked or not)
  const std::optional<Error>& store_error() const { return store_error_; }

 private:
  struct Outcome {
    const OutboxRow* row;
    AttemptVerdict verdict;
  };

  bool MarkPublished(const std::vector<int64_t>& ids);
  bool MarkFailed(const std::vector<Outcome>& failures);
  void LogOutcome(const Outcome& outcome, bool marked);
  void CheckCount(const Result<size_t>& marked, size_t expected, std::string_view operation);
  void NoteStoreError(const Error& error, std::string_view what);

  OutboxStore& store_;
  Metrics& metrics_;
  Logger& logger_;
  std::string node_id_;
  std::string token_;
  std::vector<Outcome> outcomes_;  // since the last Flush, in the order reported
  size_t published_ = 0;
  size_t failed_ = 0;
  std::optional<Error> store_error_;
};

}  // namespace room_outbox::relay
