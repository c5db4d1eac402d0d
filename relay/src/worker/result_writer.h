// ResultWriter: writes one claim's results back with its token and logs one line per row.
//
// The worker reports each row's outcome (Delivered / Failed / Parked / Expired) as it learns it;
// Flush, called for every batch of answers (RoomSender), writes what was gathered since the last
// call: one MarkPublished, one MarkFailed and one MarkParked (parks and expired rows together). A
// store call that fails hands what it could not write to UnwrittenResults, when given. Then one
// outcome line per row (written after the marks, so that `status` says what the database holds)
// with worker, node_id, event_id, event_type, room_id, retry_count, status and error. Release gives
// back rows that were not attempted (due at once, retry_count unchanged). A mark that counts fewer
// rows than asked means the lease ran out and another claim holds them now (its result counts): a
// warning, not an error. A failing store call is an error of the round (store_error), logged at
// error.
//
// Log volume (journald rate-limits a unit's lines; an IM outage must not push the recovery lines
// out): the outcome line's level follows the row's history, not just the attempt:
//   failed, the row's first failure (retry_count 0 before it)  warn (error when the verdict says
//                                                               error: permanent, undecodable)
//   failed again                                               debug
//   parked                                                     error, "outbox event parked",
//                                                               parked_after=N (once per row)
//   expired ([tencent_im.max_age_by_type]: parked, not sent,   warn, "outbox event expired",
//   retry_count unchanged)                                     error=expired, age_ms (once per
//                                                               row); room_outbox_expired_total
//                                                               {event_type} + 1 once recorded
//   published after failures (retry_count > 0)                 info, "outbox event published
//                                                               after failures"
//   published at the first attempt                             the verdict's level (debug)
//   any result the database did not record                     error
// plus, from Summarize, one warn line per round with failures ("outbox round had failures").
// Rooms held behind a failing head row are tracked across rounds by HeldRooms (below).
//
// Failed attempts carry a delay; the store adds it to the database server's clock at the mark.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "store/relay_store.h"
#include "telemetry/log_line.h"
#include "telemetry/metrics.h"
#include "worker/retry_policy.h"
#include "worker/unwritten_results.h"

namespace room_outbox::relay {

// The rooms per-room order holds behind a failing head row, remembered across rounds so that
// "room held back by a failing head row" is logged (info) when a room enters that state and
// "room released" (info) when it leaves it (a row of the room was published or parked); a room
// held again in a later round is logged at debug. Bounded: a room not seen held for
// `forget_after` is forgotten (e.g. its head was parked by an operator or published by another
// relay), and at most `max_rooms` are kept (the least recently seen go first). Times are
// monotonic milliseconds from the caller. One thread.
class HeldRooms {
 public:
  explicit HeldRooms(std::chrono::milliseconds forget_after = std::chrono::minutes(10),
                     size_t max_rooms = 10000);

  // The room is held in the round at `now_ms`. True when it was not held before: it entered.
  bool Hold(const std::string& room_id, int64_t now_ms);
  // A row of the room was published or parked. True when the room was held: it left.
  bool Release(const std::string& room_id);
  size_t size() const { return last_seen_.size(); }

 private:
  void Forget(int64_t now_ms);

  int64_t forget_after_ms_;
  size_t max_rooms_;
  std::unordered_map<std::string, int64_t> last_seen_;  // room -> last time held (monotonic)
};

class ResultWriter {
 public:
  // `held_rooms` (optional, must outlive the writer) carries the held state across rounds;
  // without it every held room is logged at debug. `unwritten` (optional, must outlive the
  // writer) keeps the results a failing store call could not write, to be written when the
  // database answers again (UnwrittenResults).
  ResultWriter(RelayStore& store, Metrics& metrics, Logger& logger, std::string node_id,
               std::string token, HeldRooms* held_rooms = nullptr,
               UnwrittenResults* unwritten = nullptr);

  // `note`: the row's history entry (store/attempt_history.h); empty: none.
  void Delivered(const OutboxRow& row, AttemptNote note = {});
  // A row of a type in skip_event_types, settled without a send: marked published like a
  // delivered row (so it is never sent), but counted in room_outbox_skipped_total and logged
  // "outbox event skipped", not as published.
  void Skipped(const OutboxRow& row);
  void Failed(const OutboxRow& row, AttemptVerdict verdict, AttemptNote note = {});
  // A failed attempt that parks the row (ParkPolicy): MarkParked instead of MarkFailed.
  // `parked_after` is the park_permanent_after setting, for the log line.
  void Parked(const OutboxRow& row, AttemptVerdict verdict, int64_t parked_after,
              AttemptNote note = {});
  // A row too old to be sent (ExpiryPolicy), `age_ms` old at the claim's server now: parked
  // with last_error "expired" (MarkParked, not an attempt: retry_count unchanged). Neither a
  // publish failure nor a failed attempt of the round.
  void Expired(const OutboxRow& row, int64_t age_ms);

  // Per-room order keeps `rows` later rows of `room_id` back behind a failing row (`event_id`,
  // empty when the room was blocked at load) in the round at `now_ms` (monotonic). Behind a row
  // parked in this round the room is not held (the next claim takes its rows): a debug line.
  void HeldBack(const std::string& room_id, const std::string& event_id, uint64_t rows,
                int64_t now_ms);

  // Writes and logs the results gathered since the last call.
  void Flush();
  // Gives back rows that were not attempted (one Release).
  void Release(std::span<const int64_t> ids);
  // The round's one summary line, when it had failed attempts (warn "outbox round had
  // failures"): failed, parked, rooms_held, released and the round's first error.
  void Summarize(size_t rooms_held, size_t released) const;

  size_t published() const { return published_; }  // delivered, recorded in the database
  size_t skipped() const { return skipped_; }      // skipped, recorded as published
  size_t failed() const { return failed_; }        // failed attempts (marked or not), parks too
  size_t parked() const { return parked_; }        // recorded as parked in the database
  size_t expired() const { return expired_; }      // recorded as parked because expired
  const std::optional<Error>& store_error() const { return store_error_; }

 private:
  enum class Kind { kDelivered, kSkipped, kFailed, kParked, kExpired };
  struct Outcome {
    const OutboxRow* row;
    AttemptVerdict verdict;
    Kind kind;
    int64_t parked_after = 0;
    int64_t age_ms = 0;  // kExpired
    AttemptNote note;    // the history entry; empty: none
  };

  bool MarkPublished(const std::vector<int64_t>& ids, const std::vector<AttemptNote>& notes);
  bool MarkFailures(const std::vector<Outcome>& failures, Kind kind);
  void LogOutcome(const Outcome& outcome, bool marked);
  void NoteMarked(const Outcome& outcome);
  void NoteLeft(const Outcome& outcome);
  void CheckCount(const core::Result<size_t>& marked, size_t expected, std::string_view operation);
  void NoteStoreError(const Error& error, std::string_view what);
  LogLine Line(std::string_view message) const;

  RelayStore& store_;
  Metrics& metrics_;
  Logger& logger_;
  std::string node_id_;
  std::string token_;
  HeldRooms* held_rooms_;
  UnwrittenResults* unwritten_;
  std::vector<Outcome> outcomes_;  // since the last Flush, in the order reported
  size_t published_ = 0;
  size_t skipped_ = 0;
  size_t failed_ = 0;
  size_t parked_ = 0;
  size_t expired_ = 0;
  std::string first_error_;                       // of the round's first failed attempt
  std::unordered_set<std::string> parked_rooms_;  // rooms with a row parked in this round
  std::optional<Error> store_error_;
};

}  // namespace room_outbox::relay
