// OutboxWorker: the relay loop. It claims due pending rows, publishes them to IM and writes each
// row's result back, following the seed's worker semantics:
//   success (or a type not sent to IM) -> MarkPublished
//   failure -> MarkFailed: the store adds 1 to retry_count and keeps last_error; the row is due
//              again poll_interval later (fixed interval, unbounded retries), never in the same
//              round
//   undecodable envelope -> MarkFailed with "undecodable envelope: <why>" (the row is kept), the
//              rest of the batch continues, and the round reports an error
//   claim or mark failure -> an error of the round; Run() waits and tries again
//
// A round (RunRound):
//   1. ClaimDue(limit=batch_size, lease, per_room_order); nothing new is claimed once a stop was
//      requested.
//   2. Decode each row.
//   3. Publish in waves through Publisher::PublishMany(max_in_flight), each row bounded by
//      publish_timeout.
//      ordering=per_room: a wave holds at most one row per room (the room's next row, in id order).
//        When a room's row fails, its later rows of this claim are Released (not attempted,
//        retry_count unchanged) so that they never overtake it; other rooms go on. A room's sends
//        are at least room_min_interval apart (also across rounds): when no room is ready the
//        worker sleeps on the Clock until the first one is.
//      Rows of types the publisher never sends (Publisher::Sends false) are delivered without a
//      send slot or pacing when they reach the front of their room.
//      ordering=none: rows go in id order. Either way a wave holds at most max_in_flight rows.
//      Before each wave the claim's remaining lease is checked: when publish_timeout plus a
//      margin for the marking no longer fits, the rows left are Released.
//      A stop requested between waves Releases the rows not yet attempted.
//   4. After each wave, one MarkPublished and one MarkFailed with that wave's results, so a
//      relay killed mid-claim leaves at most its last wave (max_in_flight rows) delivered but
//      unmarked (sent again by whoever claims the rows after the lease). A failing mark ends the
//      round (the rest is Released). At the end, one Release for every row not attempted.
//
// Rate-limited answers (Tencent frequency limits) are failed attempts due again after
// max(poll_interval, 1s), so a per-second frequency window has passed; the round then stops
// sending (the rest is Released) and Run() waits poll_interval before the next claim.
//
// Thread-safety: one thread drives a worker. The StopSignal may be set from any thread.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "clock.h"
#include "log_line.h"
#include "metrics.h"
#include "outbox_store.h"
#include "publisher.h"

namespace room_outbox::relay {

struct WorkerOptions {
  std::string node_id;
  std::chrono::milliseconds poll_interval{1000};
  size_t batch_size = 100;
  std::chrono::milliseconds publish_timeout{3000};
  size_t max_in_flight = 16;
  bool per_room_order = true;
  std::chrono::milliseconds lease{30000};
  std::chrono::milliseconds room_min_interval{50};
  // Types the publisher delivers without a send ([tencent_im] skip_event_types): they take no
  // pace, so a claim does not count them when it cuts a busy room.
  std::vector<std::string> unpaced_event_types;
  // Time kept free at the end of a lease for writing the results.
  std::chrono::milliseconds lease_margin{1000};
  // Earliest retry of a rate-limited row: max(poll_interval, this).
  std::chrono::milliseconds rate_limited_retry{1000};
  // Cap of the back-off while database errors repeat (it starts at poll_interval and doubles).
  std::chrono::milliseconds max_error_backoff{30000};
  // Pending/oldest gauges are refreshed from OutboxStore::Stats at most once per round and at
  // most this often.
  std::chrono::milliseconds stats_interval{1000};
};

// Builds WorkerOptions from the [outbox_worker] section and the publisher's skipped types.
WorkerOptions ToWorkerOptions(const WorkerConfig& config, const std::string& node_id,
                              std::vector<std::string> unpaced_event_types = {});

struct RoundResult {
  size_t claimed = 0;
  size_t published = 0;  // delivered: published or skipped
  size_t failed = 0;     // failed attempts marked (incl. undecodable and rate-limited)
  size_t undecodable = 0;
  size_t released = 0;  // given back unattempted (held back, lease, stop, rate limit)
  size_t waves = 0;     // PublishMany calls
  bool full = false;    // the claim returned batch_size rows: more may be due
  bool rate_limited = false;
  // The first error of the round: a store call failed (store_error) or an envelope was
  // undecodable.
  std::optional<Error> error;
  bool store_error = false;
};

struct DrainResult {
  size_t rounds = 0;
  size_t published = 0;
  size_t failed = 0;  // failed attempts, undecodable included
  size_t undecodable = 0;
  std::optional<Error> store_error;  // set when a round failed on the database
  bool stopped = false;              // a stop was requested before the outbox was drained
  bool ok() const { return failed == 0 && !store_error; }
};

class OutboxWorker {
 public:
  // The collaborators must outlive the worker. `on_status`, when set, receives short operator
  // status texts (e.g. for sd_notify STATUS=) when the database state changes.
  OutboxWorker(WorkerOptions options, OutboxStore& store, Publisher& publisher, Clock& clock,
               StopSignal& stop, Metrics& metrics, Logger& logger,
               std::function<void(std::string_view)> on_status = {});

  // One claim + publish + mark. Claims nothing when a stop was requested.
  RoundResult RunRound();

  // The daemon loop: a round at once; the next round at once after a full batch, else after
  // poll_interval (room_min_interval while rows a claim scheduled for a paced room are still
  // coming due, so such a room keeps its pace); after a database error a back-off from
  // poll_interval doubling to max_error_backoff. Returns when a stop was requested (after the
  // current round is marked).
  void Run();

  // For --once: rounds until a claim brings no row not yet attempted in this run, so every due
  // row is tried once. Rows that come due again during the run (a failure's next attempt) are
  // given back unattempted. Stops early on a database error or a stop request.
  DrainResult Drain();

 private:
  struct Item;
  RoundResult Round(std::unordered_set<int64_t>* attempted);
  void RefreshStats();
  void Publish(Claim& claim, std::vector<Item>& items, RoundResult& result);

  WorkerOptions options_;
  OutboxStore& store_;
  Publisher& publisher_;
  Clock& clock_;
  StopSignal& stop_;
  Metrics& metrics_;
  Logger& logger_;
  std::function<void(std::string_view)> on_status_;
  // Last send time per room, for room_min_interval across rounds (pruned each round).
  std::unordered_map<std::string, int64_t> last_send_ms_;
  // Rooms seen held back by a failed row, until one of their rows is delivered.
  std::unordered_set<std::string> held_back_rooms_;
  int64_t last_stats_ms_ = 0;
  bool stats_refreshed_ = false;
  // The latest next_attempt_at_ms this worker's claims gave a paced room's rows.
  int64_t paced_until_ms_ = 0;
};

}  // namespace room_outbox::relay
