// RetryPolicy: what one attempt's outcome means for its row. Delivered (published, or a type
// that is never sent), or a failed attempt that is due again after a delay: the fixed interval
// (poll_interval, retry_strategy "fixed_interval", unbounded retries), and for frequency-limited
// answers (failure scope room or global_rate) max(poll_interval,
// rate_limited_min) so that a per-second window has passed. (With room_min_interval the sender
// gives a room's refusal the room's widened gap instead: RoomPacing.)
//
// The result is a delay (retry_after), never a due time: the store turns it into a time on one
// clock (today the relay's when it marks the row; the database server's once the store reads it).
#pragma once

#include <spdlog/common.h>

#include <chrono>
#include <string>

#include "core/publisher.h"

namespace room_outbox::relay {

// Bounds an error text for last_error and the outcome line (about 200 bytes, cut on a UTF-8
// boundary, "..." appended when cut).
std::string ShortError(std::string text);

struct AttemptVerdict {
  bool delivered = false;
  std::string error;                         // short and secret-free; empty when delivered
  std::chrono::milliseconds retry_after{0};  // not delivered: due again this much later
  spdlog::level::level_enum level = spdlog::level::debug;  // of the row's outcome line
  // IM definitely did not deliver it (MsgDropReason): the store adds 1 to drop_count, so the
  // next send gets a new Random.
  bool dropped = false;
  // Not delivered, not dropped, and the row headed a pack of 2+ events: the pack's events, which
  // the store records (pack_size) so the next send is the same pack. 0 otherwise.
  uint32_t pack_size = 0;
};

class RetryPolicy {
 public:
  RetryPolicy(std::chrono::milliseconds poll_interval, std::chrono::milliseconds rate_limited_min);

  // One publish outcome: delivered (debug line), retryable/unknown (warn) or permanent (error),
  // with the error text "<status>: <reason>". Not for kNotAttempted outcomes: those are not
  // attempts and are given back uncharged (the caller's job).
  AttemptVerdict Judge(const core::PublishOutcome& outcome) const;

  // A row whose envelope cannot be decoded: kept, "undecodable envelope: <why>", error line.
  AttemptVerdict Undecodable(const std::string& why) const;

  // The delay of a failed attempt: max(poll_interval, rate_limited_min) for frequency limits
  // (room scope, e.g. MsgFreqCtrl or 10023, and global rate limits), else poll_interval.
  std::chrono::milliseconds RetryAfter(const core::PublishOutcome& outcome) const;

 private:
  std::chrono::milliseconds poll_interval_;
  std::chrono::milliseconds rate_limited_min_;
};

}  // namespace room_outbox::relay
