// The relay's metrics: lock-free counters and gauges, rendered in the Prometheus text format.
//
//   room_outbox_pending_total             gauge    pending rows in the outbox (from Stats)
//   room_outbox_oldest_pending_age_ms     gauge    age of the oldest pending row (from Stats)
//   room_outbox_publish_success_total     counter  rows IM accepted (not the skipped ones)
//   room_outbox_publish_failure_total     counter  failed attempts (incl. rate-limited,
//                                                  undecodable)
//   room_outbox_publish_latency_ms        histogram latency of each publish attempt
//   room_outbox_rooms_held_back           gauge    rooms whose later rows wait behind a failed row
//   room_outbox_rooms_waiting             gauge    rooms whose head has been pending over 5 s
//                                                  (from Stats; NaN while stale)
//   room_outbox_rooms_backlogged          gauge    rooms with pending rows on the room schedule
//                                                  (from Stats; NaN while stale)
//   room_outbox_rows_listed_total         counter  rows this relay's claims put on the room
//                                                  schedule: rows that arrived, and rows given
//                                                  back or requeued (listed again)
//   room_outbox_rounds_total / room_outbox_round_errors_total  counters of claim rounds
// What reaches the rooms:
//   room_outbox_publish_messages_total    counter  send_group_msg messages IM accepted
//   room_outbox_publish_events_per_message histogram events each accepted message carried (1
//                                                  until events are packed)
//   room_outbox_room_refusals_total       counter  attempts a room's group refused for now (its
//                                                  frequency control: MsgFreqCtrl, 10023;
//                                                  FailureScope::kRoom)
//   room_outbox_rooms_backed_off          gauge    rooms whose gap between sends is wider than
//                                                  room_min_interval after refusals (RoomPacing)
//   The oldest head's age is room_outbox_oldest_pending_age_ms: with per-room order the oldest
//   pending row is always a room's head.
// Operations:
//   room_outbox_publish_failures_by_reason_total{reason}  counter  failed attempts by reason
//        (FailureReason: what each label counts): timeout|http|im_error|rate_limited|permanent|
//        undecodable. A name of its own: the required unlabelled
//        room_outbox_publish_failure_total stays, and one family holding both an unlabelled and
//        labelled samples would double every sum() over it (client libraries refuse such a
//        family; promtool lets it pass).
//   room_outbox_db_up                  gauge  1 when the last database call of the loop worked
//   room_outbox_db_read_only           gauge  1 while the loop's last claim or mark was refused
//        because the database is read-only (a failover's replica, a demoted primary); db_up is
//        0 then too
//   room_outbox_im_breaker_open        gauge  1 while the IM circuit breaker is open
//   room_outbox_parked_rows            gauge  parked rows (NaN until first known)
//   room_outbox_in_flight_rows         gauge  rows being published right now
//   room_outbox_results_unwritten      gauge  results (marks, releases) the relay holds because
//        the database went away mid-round; written first when it answers again
//   room_outbox_stats_age_seconds      gauge  age of the pending gauges' last database read; the
//        pending gauges read NaN (not 0) before the first read and once it is older than
//        stats_stale_after, so a dashboard shows a gap instead of an empty outbox
//   room_outbox_worker_heartbeat_age_seconds  gauge  since the worker loop last beat (when a
//        Heartbeat is attached)
//   room_outbox_build_info{version,revision}  gauge  always 1
//   room_outbox_db_statements_total    counter  statements the process sent to the database over
//        all its connections (core/mysql/statement_count.h: what the server counts as Questions),
//        so the load the relay puts on the database is seen without the server's global counters
// The app's shared IM budget (core/app_budget; NaN while the process is no member, e.g.
// app_requests_per_second = 0):
//   room_outbox_im_budget_share_requests_per_second  gauge  this process's current share of
//        [tencent_im] app_requests_per_second, before its own cap (requests_per_second)
//   room_outbox_im_budget_members      gauge  live members of the app at the last beat (NaN
//        while the table cannot be read: the share is then the safe fallback)
// A relay with [tencent_im.max_age_by_type]:
//   room_outbox_expired_total{event_type}  counter  rows parked as expired (too old to be sent
//        when their turn came), by event type: only the types named in max_age_by_type
//        (DeclareExpiredTypes), so the label values are bounded; no series without the table
// [tencent_im] skip_event_types:
//   room_outbox_skipped_total{event_type}  counter  rows marked without a send because their type
//        is in skip_event_types (their row status is 'published', so they are never sent), by
//        event type: only the declared types (DeclareSkippedTypes); no series when the list is
//        empty. Not counted in room_outbox_publish_success_total.
// A relay that wakes:
//   room_outbox_wakeups_total          counter  datagrams received on the [wake] socket (a burst
//        read at once is one wake-up of the worker but counts every datagram)
// A relay daemon (daemon/lease_takeover.h):
//   room_outbox_leases_taken_over_total  counter  rows this relay gave back from relays proven
//        gone (their node lock free), due at once for any relay to claim
// The metrics listener itself:
//   room_outbox_metrics_connections_cut_total  counter  connections to this listener shut down at
//        kMetricsListenerLimits.connection_deadline (a client that paced its request or its
//        reading to hold a worker)
//
// Thread-safety: every method may be called from any thread (the /metrics server reads while the
// worker writes).
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <ostream>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/result.h"

namespace room_outbox::core {
struct PublishOutcome;
}

namespace room_outbox::relay {

class Heartbeat;

// Why an attempt failed, for room_outbox_publish_failures_by_reason_total. Each value is named
// after the outcomes it counts; its label (FailureReasonName) is public and spelled as it always
// was.
enum class FailureReason {
  // label "timeout": PublishStatus::kUnknown, an attempt whose outcome is unknown. IM may have
  // the message: no answer came within publish_timeout after the request went out, the
  // connection dropped after it went out, or the answer was too large to read.
  kUnknownOutcome,
  // label "http": PublishStatus::kRetryable without an IM ErrorCode: no HTTP answer (connect or
  // resolve failure, a timeout before the request went out), HTTP 5xx or 408, a 200 that is
  // not IM's JSON, or the publisher could not send (busy, UserSig).
  kHttp,
  // label "im_error": PublishStatus::kRetryable with an IM ErrorCode (HTTP 200), e.g. 10002, and
  // the ErrorCodes missing from the classifier's table (retried, never parked).
  kImError,
  // label "rate_limited": PublishStatus::kRateLimited, a frequency limit (IM codes, HTTP 429,
  // MsgDropReason) or no request budget within the timeout.
  kRateLimited,
  // label "permanent": PublishStatus::kPermanent, a refusal that a retry alone does not cure,
  // whatever its scope: a row that can never be delivered (FailureScope::kUndeliverableRow, the
  // only kind park_permanent_after parks), an app-wide refusal (kApp), or a libcurl error that is
  // not retryable (kRow, retried).
  kPermanent,
  // label "undecodable": the stored envelope cannot be decoded (no request was made).
  kUndecodable,
};
inline constexpr size_t kFailureReasonCount = 6;
const char* FailureReasonName(FailureReason reason);
// The reason of a failed publish outcome (not for a delivered one).
FailureReason FailureReasonOf(const core::PublishOutcome& outcome);

class Metrics {
 public:
  // Upper bounds (ms) of the latency buckets; a +Inf bucket follows.
  static constexpr std::array<int64_t, 12> kLatencyBucketsMs = {
      5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000};
  // Upper bounds of the events-per-message buckets; a +Inf bucket follows.
  static constexpr std::array<int64_t, 7> kEventsPerMessageBuckets = {1, 2, 5, 10, 20, 50, 100};

  void AddPublishSuccess(uint64_t n = 1) { success_.fetch_add(n, std::memory_order_relaxed); }
  void AddPublishFailure(uint64_t n = 1) { failure_.fetch_add(n, std::memory_order_relaxed); }
  void ObservePublishLatency(int64_t latency_ms);
  void SetPending(int64_t pending, int64_t oldest_pending_age_ms);
  void SetRoomsHeldBack(int64_t rooms) { rooms_held_back_.store(rooms, std::memory_order_relaxed); }
  void SetRoomsWaiting(int64_t rooms) { rooms_waiting_.store(rooms, std::memory_order_relaxed); }
  void SetRoomsBacklogged(int64_t rooms) {
    rooms_backlogged_.store(rooms, std::memory_order_relaxed);
  }
  void AddRowsListed(uint64_t rows) { rows_listed_.fetch_add(rows, std::memory_order_relaxed); }
  void AddRound(bool failed);
  // One message IM accepted, carrying `events` events (>= 1).
  void AddMessageDelivered(uint64_t events);
  // One attempt a room's group refused for now (FailureScope::kRoom).
  void AddRoomRefusal() { room_refusals_.fetch_add(1, std::memory_order_relaxed); }
  void SetResultsUnwritten(int64_t rows) {
    results_unwritten_.store(rows, std::memory_order_relaxed);
  }
  void SetRoomsBackedOff(int64_t rooms) {
    rooms_backed_off_.store(rooms, std::memory_order_relaxed);
  }

  // On a SystemClock of its own.
  Metrics() : clock_(system_clock_) {}
  // On `clock` (its SteadyMs ages the pending gauges), which must outlive the metrics and be
  // thread-safe: /metrics reads it from the server's thread.
  explicit Metrics(core::Clock& clock) : clock_(clock) {}
  Metrics(const Metrics&) = delete;
  Metrics& operator=(const Metrics&) = delete;

  // --- operations ---
  // One failed attempt (in addition to AddPublishFailure, which keeps the required unlabelled
  // total).
  void AddPublishFailureByReason(FailureReason reason, uint64_t n = 1);
  void SetDbUp(bool up) { db_up_.store(up ? 1 : 0, std::memory_order_relaxed); }
  // The read-only refusal (core::IsReadOnlyRefusal) of the loop's last claim or mark; empty
  // once one goes through or the database fails otherwise. Not ready while it is set.
  void SetDbReadOnly(std::string refusal);
  // Why the relay cannot start its work yet (a schema older than it needs, with the command to
  // run); empty once it can. Not ready while it is set.
  void SetNotReadyReason(std::string reason);
  std::string not_ready_reason() const;
  void SetImBreakerOpen(bool open) { breaker_open_.store(open ? 1 : 0, std::memory_order_relaxed); }
  void SetParkedRows(int64_t rows) { parked_rows_.store(rows, std::memory_order_relaxed); }
  // The app budget's last beat: the share, and the live members (< 0: the table was not read).
  void SetImBudgetShare(double share, int members) {
    im_budget_share_.store(share, std::memory_order_relaxed);
    im_budget_members_.store(members, std::memory_order_relaxed);
  }
  void SetInFlight(int64_t rows) { in_flight_.store(rows, std::memory_order_relaxed); }
  void AddInFlight(int64_t delta) { in_flight_.fetch_add(delta, std::memory_order_relaxed); }
  // --- [tencent_im.max_age_by_type] ---
  // The event types room_outbox_expired_total has a series for (each starts at 0): the keys of
  // max_age_by_type. Call before the worker runs.
  template <class Map>
  void DeclareExpiredTypes(const Map& max_age_by_type) {
    std::lock_guard<std::mutex> lock(expired_.mu);
    for (const auto& entry : max_age_by_type) expired_.counts.try_emplace(entry.first, 0);
  }
  // One row of `event_type` parked as expired. Only declared types are counted: a bounded set of
  // label values whatever the caller passes.
  void AddExpired(const std::string& event_type);
  uint64_t expired(const std::string& event_type) const;
  // --- [tencent_im] skip_event_types ---
  // The event types room_outbox_skipped_total has a series for (each starts at 0).
  void DeclareSkippedTypes(const std::vector<std::string>& skip_event_types);
  // One row of `event_type` marked without a send because its type is skipped; only declared
  // types are counted. Not a publish success: room_outbox_publish_success_total counts rows IM
  // accepted.
  void AddSkipped(const std::string& event_type);
  uint64_t skipped(const std::string& event_type) const;
  // --- a relay that wakes ---
  void AddWakeups(uint64_t datagrams) { wakeups_.fetch_add(datagrams, std::memory_order_relaxed); }
  uint64_t wakeups() const { return wakeups_.load(std::memory_order_relaxed); }
  // --- a relay daemon's lease takeover ---
  void AddLeasesTakenOver(uint64_t rows) {
    leases_taken_over_.fetch_add(rows, std::memory_order_relaxed);
  }
  uint64_t leases_taken_over() const { return leases_taken_over_.load(std::memory_order_relaxed); }
  // --- the metrics listener ---
  void AddMetricsConnectionCut() { connections_cut_.fetch_add(1, std::memory_order_relaxed); }
  uint64_t metrics_connections_cut() const {
    return connections_cut_.load(std::memory_order_relaxed);
  }
  // The heartbeat whose age /metrics shows (optional; must outlive the Metrics).
  void AttachHeartbeat(const Heartbeat* heartbeat) { heartbeat_ = heartbeat; }
  // Pending gauges older than this read NaN. Default 30 s (the worker refreshes every second).
  void SetStatsStaleAfter(std::chrono::milliseconds age) { stats_stale_after_ms_ = age.count(); }
  // version/revision labels of room_outbox_build_info.
  void SetBuildInfo(std::string version, std::string revision);

  bool db_up() const { return db_up_.load(std::memory_order_relaxed) != 0; }
  bool db_read_only() const { return db_read_only_.load(std::memory_order_relaxed); }
  std::string db_read_only_refusal() const;
  bool im_breaker_open() const { return breaker_open_.load(std::memory_order_relaxed) != 0; }
  int64_t parked_rows() const { return parked_rows_.load(std::memory_order_relaxed); }
  int64_t in_flight() const { return in_flight_.load(std::memory_order_relaxed); }
  uint64_t publish_failure(FailureReason reason) const {
    return by_reason_[static_cast<size_t>(reason)].load(std::memory_order_relaxed);
  }
  // Milliseconds since SetPending was last called; -1 when it never was.
  int64_t stats_age_ms() const;
  // Whether gauges read at `stats_age_ms` are unknown: never read, or older than
  // stats_stale_after.
  bool StatsStale(int64_t stats_age_ms) const;
  // Ready: no not-ready reason, the database answered the loop's last call and took its last
  // write, and the IM breaker is closed.
  bool ready() const {
    return !has_not_ready_reason_.load() && db_up() && !db_read_only() && !im_breaker_open();
  }

  uint64_t publish_success() const { return success_.load(std::memory_order_relaxed); }
  uint64_t publish_failure() const { return failure_.load(std::memory_order_relaxed); }
  int64_t pending() const { return pending_.load(std::memory_order_relaxed); }
  int64_t oldest_pending_age_ms() const { return oldest_age_ms_.load(std::memory_order_relaxed); }
  int64_t rooms_held_back() const { return rooms_held_back_.load(std::memory_order_relaxed); }
  int64_t rooms_waiting() const { return rooms_waiting_.load(std::memory_order_relaxed); }
  int64_t rooms_backlogged() const { return rooms_backlogged_.load(std::memory_order_relaxed); }
  uint64_t rows_listed() const { return rows_listed_.load(std::memory_order_relaxed); }
  uint64_t latency_count() const { return latency_count_.load(std::memory_order_relaxed); }
  uint64_t messages_delivered() const { return messages_.load(std::memory_order_relaxed); }
  uint64_t message_events() const { return message_events_.load(std::memory_order_relaxed); }
  uint64_t room_refusals() const { return room_refusals_.load(std::memory_order_relaxed); }
  int64_t rooms_backed_off() const { return rooms_backed_off_.load(std::memory_order_relaxed); }
  int64_t results_unwritten() const { return results_unwritten_.load(std::memory_order_relaxed); }

  // Prometheus text exposition format 0.0.4.
  std::string RenderPrometheus() const;

 private:
  // The families of RenderPrometheus, in its order.
  void RenderSpecified(std::ostream& out, int64_t stats_age_ms) const;
  void RenderOperations(std::ostream& out, int64_t stats_age_ms) const;
  void RenderBacklog(std::ostream& out, int64_t stats_age_ms) const;
  void RenderProcess(std::ostream& out) const;
  void RenderDelivery(std::ostream& out) const;
  void RenderLatency(std::ostream& out) const;
  void RenderByType(std::ostream& out) const;

  core::SystemClock system_clock_;  // the clock unless one was given
  core::Clock& clock_;
  std::atomic<uint64_t> success_{0};
  std::atomic<uint64_t> failure_{0};
  std::atomic<int64_t> pending_{0};
  std::atomic<int64_t> oldest_age_ms_{0};
  std::atomic<int64_t> rooms_held_back_{0};
  std::atomic<int64_t> rooms_waiting_{0};
  std::atomic<int64_t> rooms_backlogged_{0};
  std::atomic<uint64_t> rows_listed_{0};
  std::atomic<uint64_t> rounds_{0};
  std::atomic<uint64_t> round_errors_{0};
  // Per-bucket (non-cumulative) counts; the +Inf bucket is the last.
  std::array<std::atomic<uint64_t>, kLatencyBucketsMs.size() + 1> buckets_{};
  std::atomic<uint64_t> latency_count_{0};
  std::atomic<int64_t> latency_sum_ms_{0};
  // Per-bucket (non-cumulative) counts of events per accepted message; the +Inf bucket is last.
  std::array<std::atomic<uint64_t>, kEventsPerMessageBuckets.size() + 1> per_message_{};
  std::atomic<uint64_t> messages_{0};
  std::atomic<uint64_t> message_events_{0};
  std::atomic<uint64_t> room_refusals_{0};
  std::atomic<int64_t> rooms_backed_off_{0};
  std::atomic<int64_t> results_unwritten_{0};

  std::array<std::atomic<uint64_t>, kFailureReasonCount> by_reason_{};
  std::atomic<int> db_up_{0};
  std::atomic<bool> has_not_ready_reason_{false};
  mutable std::mutex not_ready_mu_;  // rare writes (the schema wait), one read per /readyz
  std::string not_ready_reason_;
  std::atomic<bool> db_read_only_{false};
  std::string db_read_only_refusal_;  // guarded by not_ready_mu_
  std::atomic<int> breaker_open_{0};
  std::atomic<int64_t> parked_rows_{-1};     // -1: not known yet
  std::atomic<double> im_budget_share_{-1};  // < 0: no member
  std::atomic<int> im_budget_members_{-1};   // < 0: not read
  std::atomic<int64_t> in_flight_{0};
  std::atomic<int64_t> stats_read_steady_ms_{-1};  // -1: never read
  std::atomic<uint64_t> wakeups_{0};
  std::atomic<uint64_t> leases_taken_over_{0};
  std::atomic<uint64_t> connections_cut_{0};
  // A counter by event type over a bounded, declared set of types: rare writes, one read per
  // scrape.
  struct TypeCounts {
    mutable std::mutex mu;
    std::map<std::string, uint64_t> counts;
    void Add(const std::string& event_type);
    uint64_t Get(const std::string& event_type) const;
  };
  TypeCounts expired_;
  TypeCounts skipped_;
  int64_t stats_stale_after_ms_ = 30000;
  const Heartbeat* heartbeat_ = nullptr;
  std::string version_;
  std::string revision_ = "unknown";
};

// What /healthz and /readyz answer (MetricsServer):
//   /healthz  200 "ok" while `heartbeat` is younger than `stale_after`, else 503 "stale: ..."
//             (200 when no heartbeat is attached: nothing to judge by).
//   /readyz   200 "ready" when Metrics::ready(), else 503 naming what is down (the not-ready
//             reason when one is set: the schema version found and needed, the command to run;
//             the server's read-only refusal, "... database is read-only: <server's text>
//             [errno N]").
struct HealthOptions {
  const Heartbeat* heartbeat = nullptr;
  std::chrono::milliseconds stale_after{60000};
};

// What the metrics listener allows a client (one home for these values; docs/operations.md
// "The metrics listener" states them). A client that sends nothing for read_timeout (between any
// two reads of its request) or reads nothing of the answer for write_timeout is dropped, and a
// connection still open connection_deadline after a worker took it is shut down whatever its
// pace, so a slow, stalled or trickling client holds a worker for at most about
// connection_deadline and /healthz is answered within about that long even while every worker is
// held. One request per connection (no keep-alive); no request body is ever read. The request
// line and each header line are limited by cpp-httplib's build (8192 bytes each).
struct MetricsListenerLimits {
  size_t workers;                           // connections served at once; more wait to be accepted
  std::chrono::milliseconds read_timeout;   // for each read of the request
  std::chrono::milliseconds write_timeout;  // for each write of the answer
  // For the whole connection, from the moment a worker takes it; the connections it cuts are
  // counted in room_outbox_metrics_connections_cut_total. 3 s: a scrape of a large /metrics
  // (hundreds of KB) over loopback or a private network takes milliseconds, and a client that
  // stalls once for nearly read_timeout while it sends and once for nearly write_timeout while
  // it reads (2 s) still finishes; it is also the longest a liveness probe waits behind clients
  // holding every worker.
  std::chrono::milliseconds connection_deadline;
};
inline constexpr MetricsListenerLimits kMetricsListenerLimits{8, std::chrono::milliseconds(1000),
                                                              std::chrono::milliseconds(1000),
                                                              std::chrono::milliseconds(3000)};

// GET (and HEAD) /metrics, /healthz and /readyz over HTTP on `listen` ("host:port"), served by a
// cpp-httplib thread and kMetricsListenerLimits.workers workers; any other method is answered
// 405 without its body being read. The server counts the connections it cuts in `metrics`
// (room_outbox_metrics_connections_cut_total).
class MetricsServer {
 public:
  // Binds and starts serving; fails (kUnavailable) when the address cannot be bound.
  static core::Result<std::unique_ptr<MetricsServer>> Start(const std::string& listen,
                                                            Metrics& metrics,
                                                            HealthOptions health = {});
  ~MetricsServer();  // stops the server and joins its thread
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  int port() const { return port_; }

 private:
  struct State;
  explicit MetricsServer(std::unique_ptr<State> state, int port);
  std::unique_ptr<State> state_;
  int port_;
};

}  // namespace room_outbox::relay
