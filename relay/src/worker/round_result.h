// What one round of the worker did, told by each step of it: the claim (ClaimOutcome, from the
// coordinator's view of ClaimStep's claim), the sends (SendOutcome, RoomSender) and the marks
// (MarksOutcome, RoundMarks). RoundResult composes them with what only the whole round knows.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "core/result.h"

namespace room_outbox::relay {

// kDaemon: Run and RunRound. kDrain: --once (Drain) tries every row at most once and keeps whole
// runs of a room (no cut, nothing scheduled for later).
enum class RoundMode { kDaemon, kDrain };

struct ClaimOutcome {
  size_t claimed = 0;
  bool full = false;           // the claim returned batch_size rows (or said more are due)
  bool claimed_ahead = false;  // the claim was made ahead, while the round before was sent
  // The claim scheduled rows of paced rooms (a cut, a second row, a room sent to less than
  // room_min_interval ago) for later.
  bool scheduled = false;
  // A wake-up ended the idle wait before the round: it asked RelayStore::AnyDue first and
  // claimed only when a row was due.
  bool woken = false;
  // Monotonic time at which the earliest pending row that was not yet due at the claim comes
  // due (Claim::next_due_in_ms): the next round starts then when that is sooner than the poll.
  std::optional<int64_t> next_due_at;
};

struct SendOutcome {
  // Bursts of sends: messages handed out together after an answer or a wait (with a publisher
  // that sends in waves, its PublishMany calls).
  size_t waves = 0;
  // A global rate limit (not a room's refusal) was met that no request budget took: the sending
  // ended and the loop waits. One the budget took (it slowed itself) lets the sending go on.
  bool rate_limited = false;
  bool lease_short = false;   // rows were released: the lease could not hold another message
};

struct MarksOutcome {
  size_t published = 0;  // delivered to IM
  size_t skipped = 0;    // of skip_event_types: marked published without a send
  size_t failed = 0;     // failed attempts marked (incl. undecodable and rate-limited)
  size_t undecodable = 0;
  size_t expired = 0;   // parked as expired ([tencent_im.max_age_by_type]), not attempts
  size_t released = 0;  // given back unattempted (held back, lease, stop, rate limit, breaker)
};

struct RoundResult {
  ClaimOutcome claim;
  SendOutcome sent;
  MarksOutcome marks;
  bool breaker_open = false;  // the publisher's circuit breaker was open when the round ended
  // Rows were claimed but every one was given back without an attempt (the lease could not
  // hold one message): a failed round.
  bool released_unsent = false;
  // The first error of the round: a store call failed (store_error) or an envelope was
  // undecodable.
  std::optional<Error> error;
  bool store_error = false;
};

}  // namespace room_outbox::relay
