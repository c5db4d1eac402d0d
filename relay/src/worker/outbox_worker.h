// OutboxWorker: the relay loop. It claims due pending rows, publishes them to IM and writes each
// row's result back:
//   success (or a type not sent to IM) -> MarkPublished
//   failure -> MarkFailed: the store adds 1 to retry_count and keeps last_error; the row is due
//              again poll_interval later (fixed interval, unbounded retries), never in the same
//              round
//   undecodable envelope -> MarkFailed with "undecodable envelope: <why>" (the row is kept), the
//              rest of the batch continues, and the round reports an error
//   undeliverable row (publisher scope kUndeliverableRow, or undecodable) at the
//              park_permanent_after-th attempt, when that is > 0 -> MarkParked (ParkPolicy): the
//              row is set aside with its last_error; the room's later rows go back and the next
//              claim takes them. Never for transient failures; never with the default 0.
//   claim or mark failure -> an error of the round; Run() waits and tries again
//
// A round (Round) is four steps over single-job units:
//   1. claim: ClaimDue(limit=batch_size messages, lease, per_room_order, the run cut and the paced
//      rooms, sent to less than room_min_interval ago, RoomPacing::AddPaced); nothing is
//      claimed once a stop was requested. The lease is measured on the monotonic clock from just
//      before the call: lease left = (steady time before ClaimDue) + lease - steady now.
//   2. prepare (RoomQueues): decode each row, block rooms whose row is not attempted, queue the
//      rows per room in id order (ordering=per_room) or one queue per row (ordering=none).
//   3. send (RoomSender): one stream of messages (Publisher::PublishStream), at most one in
//      flight per room and max_in_flight in all, each bounded by publish_timeout; a room's next
//      message goes out as soon as the one before it is answered and room_min_interval allows.
//      Rows of types the publisher never sends are delivered in order without a send slot or
//      pacing. A room's sends are at least room_min_interval apart, also across rounds
//      (RoomPacing); when no room is ready the worker sleeps until the first one is. A failed
//      row's later rows of its room are released (never overtaken). Before each message: a stop
//      request, or a lease left shorter than publish_timeout + kMarkMargin, releases the rows
//      left. The results are marked in batches as the answers come (ResultWriter: one
//      MarkPublished, one MarkFailed per batch), so a relay killed mid-claim leaves at most the
//      messages in flight and those answered but not yet marked (2 x max_in_flight) delivered but
//      unmarked. A failing mark ends the round. What else a failure holds back follows its scope
//      (TENCENT_IM.md §9):
//        row, undeliverable_row: the row is due again after poll_interval, its room's later rows of
//          the claim are released;
//        room (MsgFreqCtrl, 10023): the same, due after the room's widened gap (RoomPacing;
//          max(poll_interval, 1s) without pacing); the room backs off alone; the other rooms
//          of the batch go on;
//        global_rate: as room, and the rest of the batch is given back; Run() waits
//          poll_interval;
//        app: the attempt is charged and the publisher's circuit breaker opens; rows it then
//          keeps back (kNotAttempted) are released uncharged, the round sends nothing more, and
//          Run() waits poll_interval between rounds until the breaker's probe closes it. The
//          opening and the closing are logged once each.
//   4. finish: the last marks, one Release for every row not attempted, metrics, the round line.
//      A claim released whole without a single attempt (lease too short for one message) is a
//      failed round (round error metric and a warning), and Run() does not claim again at once.
//
// Claim ahead (Run only, when the worker was given a second store): once a round's claim is full
// (more rows are due), the next claim starts on the second store (ClaimAhead,
// its own connection and thread) while this round's messages are sent and marked on the first; the
// next round takes it instead of claiming. Its lease counts from its own start; the sender checks
// it before each message as any other. When the loop is not going on at once (a short claim, a
// database error, a rate limit, the breaker, a stop) the claim made ahead is released unattempted
// on the first store before the loop sleeps or Run returns. An error of the claim made ahead is the
// next round's claim error. Marks stay on the first connection, so a kill -9 still leaves at most
// the messages in flight and those answered but not yet marked delivered but unmarked. RunRound and
// Drain never claim ahead.
//
// Modes: RoundMode::kDaemon (Run, RunRound) and RoundMode::kDrain (--once, Drain): a drain tries
// every row at most once and keeps whole runs of a room (no cut, nothing scheduled for later).
//
// Time: in-process durations (pacing, lease left, sleeps, the stats interval) use
// Clock::SteadyMs; every sleep the loop computes is clamped to max(poll_interval,
// room_min_interval), so no clock step can stretch it. Absolute times (due times, leases, interval
// slots, the pending age) are the database server's: the store computes them there, and the
// worker passes only durations (retry_after, lease, room_min_interval).
//
// Roles: ClaimStep (claim_step.h) claims and claims ahead; RoundMarks (round_marks.h) judges and
// writes back each row's outcome; RoomSender (room_sender.h) sends the messages; LoopWaits
// (loop_waits.h) sleeps and idles between rounds; WorkerStats (worker_stats.h) reads the outbox's
// gauges. This class composes them: a round is Claim, Prepare, Send, Finish (outbox_worker.cc),
// and the loops Run and Drain (outbox_worker_loop.cc).
//
// Thread-safety: one thread drives a worker. The LoopSignal may be set from any thread.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/publisher.h"
#include "store/relay_store.h"
#include "telemetry/log_line.h"
#include "telemetry/metrics.h"
#include "worker/claim_step.h"
#include "worker/drain_state.h"
#include "worker/loop_clock.h"
#include "worker/loop_waits.h"
#include "worker/park_policy.h"
#include "worker/result_writer.h"
#include "worker/retry_policy.h"
#include "worker/room_pacing.h"
#include "worker/room_sender.h"
#include "worker/round_context.h"
#include "worker/round_result.h"
#include "worker/unwritten_results.h"
#include "worker/worker_options.h"
#include "worker/worker_stats.h"

namespace room_outbox::relay {

struct DrainResult {
  size_t rounds = 0;
  size_t published = 0;
  size_t skipped = 0;  // rows of skip_event_types, marked published without a send
  size_t failed = 0;   // failed attempts, undecodable included
  size_t undecodable = 0;
  // Due rows the run gave back and never attempted (lease too short, a stop, a room held
  // behind a failed row).
  size_t unattempted = 0;
  std::optional<Error> store_error;  // set when a round failed on the database
  bool stopped = false;              // a stop was requested before the outbox was drained
  bool ok() const { return failed == 0 && !store_error && unattempted == 0; }
};

class OutboxWorker {
 public:
  // The collaborators must outlive the worker. `on_status`, when set, receives short operator
  // status texts (e.g. for sd_notify STATUS=) when the database state changes. `ahead_store`,
  // when set, is a second store (its own connection, used by the worker alone) on which Run
  // makes its next claim while a round is sent (see "Claim ahead" above).
  OutboxWorker(WorkerOptions options, RelayStore& store, core::Publisher& publisher,
               LoopClock& clock, LoopSignal& signal, Metrics& metrics, Logger& logger,
               std::function<void(std::string_view)> on_status = {},
               RelayStore* ahead_store = nullptr);

  // One claim + publish + mark. Claims nothing when a stop was requested.
  RoundResult RunRound();

  // The daemon loop: a round at once; the next round at once after a full batch, else after
  // poll_interval (room_min_interval while rows a claim scheduled for a paced room are still coming
  // due, so such a room keeps its room_min_interval), or sooner when the claim saw a pending row
  // that comes due before then (a sync lease the hook never released runs out: its rows are
  // claimed when it does, not at the next poll); after a database error a back-off from
  // poll_interval doubling to max_error_backoff. Returns when a stop was requested (after the
  // current round is marked).
  // Wake-ups (LoopSignal::Wake, the [wake] socket) end only that idle wait, never a paced room's
  // wait inside a round, the error back-off, or the wait while a rate limit, the open breaker or a
  // claim given back unsent holds the loop; and never sooner than WakeGap allows after the start
  // of the round before (wake_min_interval, more while woken rounds find nothing: wake_gap.h).
  // Each claim takes the pending wake-up just before it starts; one arriving later (during the
  // round) ends the next idle wait as soon as the gap allows. A round whose claim was made ahead
  // is followed by another claim at once, not the idle wait (the rooms then in flight were left
  // out of it, and it took the wake-up). A round a wake-up started asks
  // RelayStore::AnyDue first and claims only when a row is due.
  void Run();

  // For --once: rounds until a claim brings no row not yet attempted in this run, so every due
  // row is tried once. Rows that come due again during the run (a failure's next attempt) are
  // given back unattempted. Stops early on a database error or a stop request.
  DrainResult Drain();

 private:
  // `woken`: a wake-up ended the idle wait before this round (see Run).
  RoundResult Round(RoundMode mode, bool claim_ahead = false, bool woken = false);
  // Prepare: decodes and queues the claim's rows, marks the undecodable ones, notes the held.
  void Prepare(RoundContext& round, ClaimOutcome& claimed);
  RoundResult Finish(RoundContext& round, RoundResult& result);
  RoundResult ClaimFailed(const Error& error);
  core::Result<void> WriteUnwritten();
  void CheckReleasedWhole(const RoundContext& round, RoundResult& result);
  // The wait after a round of Run: Sleep while something holds the loop back, else the idle wait.
  // Returns true when a stop was requested; sets `woken` when a wake-up ended the wait.
  bool WaitAfterRound(const RoundResult& round, bool& woken);
  void LogRound(const RoundResult& result);
  void LogStarted();
  // "database error: backing off": at warn for the 1st, 2nd, 4th, 8th, ... error of a run, at
  // debug between.
  void LogBackoff(uint64_t consecutive_errors, std::chrono::milliseconds backoff);
  LogLine Line(std::string_view message) const;

  WorkerOptions options_;
  RelayStore& store_;
  core::Publisher& publisher_;
  LoopClock& clock_;
  LoopSignal& signal_;
  Metrics& metrics_;
  Logger& logger_;
  std::function<void(std::string_view)> on_status_;
  RetryPolicy retry_;
  ParkPolicy park_;             // [outbox_worker] park_permanent_after
  HeldRooms held_rooms_;        // rooms held behind a failing head, across rounds (for the log)
  UnwrittenResults unwritten_;  // results a failed store call kept, written before the next claim
  RoomPacing pacing_;
  LoopWaits waits_;  // sleeps, the idle wait and the wake gap
  ClaimStep claims_;
  RoomSender sender_;
  WorkerStats stats_;
  DrainState drain_;
  std::string last_claim_error_;  // the last claim's error; empty after a claim that worked
  // When the earliest room or row not yet due comes due (monotonic), as the last claim that read it
  // saw it.
  std::optional<int64_t> next_due_at_;
};

}  // namespace room_outbox::relay
