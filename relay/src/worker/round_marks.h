// RoundMarks: what one claim's rows come to, written back. Each attempt's outcome is judged
// (RetryPolicy: delivered, or failed and due again after a delay; ParkPolicy: a permanent failure
// at the park_permanent_after-th attempt parks the row) and handed to the claim's ResultWriter,
// which marks each batch of answers (Flush) and logs one line per row. A row too old to be sent
// ([tencent_im.max_age_by_type], decided by RoomSender) is parked as expired. An undecodable
// envelope is a failed attempt (kept with "undecodable envelope: <why>", or parked as a permanent
// one) and the round's first error. The failure metrics by reason and the publish latency are
// counted here.
//
// One claim, one thread.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "core/clock.h"
#include "core/publisher.h"
#include "store/relay_store.h"
#include "telemetry/log_line.h"
#include "telemetry/metrics.h"
#include "worker/park_policy.h"
#include "worker/result_writer.h"
#include "worker/retry_policy.h"
#include "worker/room_queues.h"
#include "worker/round_result.h"

namespace room_outbox::relay {

// What RoundMarks writes with and decides by; every reference must outlive the marks.
struct MarkDeps {
  RelayStore& store;
  Metrics& metrics;
  Logger& logger;
  core::Clock& clock;  // the monotonic time of held-back rooms
  const RetryPolicy& retry;
  const ParkPolicy& park;
  HeldRooms* held_rooms;  // optional: rooms held across rounds (for the log)
  std::string_view node_id;
  // Optional: keeps what a failing store call could not write, for the next round to write first.
  UnwrittenResults* unwritten = nullptr;
};

// How an attempted row was marked.
enum class AttemptMark { kDelivered, kFailed, kParked };

class RoundMarks {
 public:
  RoundMarks(const MarkDeps& deps, std::string token);

  // A row that was decoded as not sendable: a failed attempt (or a park), the round's error.
  void Undecodable(const UndecodableRow& bad);
  // A row of a type the publisher never sends (skip_event_types): marked published without a
  // send, counted in room_outbox_skipped_total{event_type}, not as a publish success.
  void Skipped(const OutboxRow& row);
  // A row too old to be sent at the claim's `server_now_ms` (ExpiryPolicy): parked with
  // last_error "expired", not an attempt (retry_count unchanged), counted in
  // room_outbox_expired_total{event_type} once recorded. Not a failure of the round.
  void Expired(const OutboxRow& row, int64_t server_now_ms);
  // An attempted row's outcome (never kNotAttempted: that is not an attempt). `pack_events`: the
  // events of the message when `row` is the first of a pack (recorded with a failure IM did not
  // definitely drop, so the next send is the same pack), 0 for a later row of a pack (the
  // message's latency is observed once, with its first row), 1 for a message of one event.
  // `retry_after`, when set, replaces RetryPolicy's delay of a failed attempt (a room's refusal
  // is due again after the room's widened gap, RoomPacing). `message_events`: the events of the
  // message the row went in, for its history entry (0: max(pack_events, 1)).
  AttemptMark Attempted(const OutboxRow& row, const core::PublishOutcome& outcome,
                        size_t pack_events = 1,
                        std::optional<std::chrono::milliseconds> retry_after = std::nullopt,
                        size_t message_events = 0);
  // `rows` later rows of `room_id` are kept back behind `event_id` (empty: blocked at load).
  void HeldBack(const std::string& room_id, const std::string& event_id, uint64_t rows);

  // Writes the results gathered since the last call; false when the store failed (now or
  // before).
  bool Flush();
  // The last marks and one Release of `released`: the claim's marks outcome.
  MarksOutcome Close(std::span<const int64_t> released);
  // The round's summary line (ResultWriter::Summarize).
  void Summarize(size_t rooms_held, size_t released) const;

  const std::optional<Error>& store_error() const { return writer_.store_error(); }
  // The first undecodable envelope's error, if any.
  const std::optional<Error>& decode_error() const { return decode_error_; }

 private:
  void Failed(const OutboxRow& row, AttemptVerdict verdict, bool permanent, AttemptNote note);

  MarkDeps deps_;
  ResultWriter writer_;
  size_t undecodable_ = 0;
  std::optional<Error> decode_error_;
};

}  // namespace room_outbox::relay
