#include "telemetry/metrics.h"

#include <limits>
#include <sstream>

#include "core/mysql/statement_count.h"
#include "core/prometheus_text.h"
#include "core/publisher.h"
#include "telemetry/health.h"

namespace room_outbox::relay {
namespace {

constexpr FailureReason kAllReasons[kFailureReasonCount] = {
    FailureReason::kUnknownOutcome, FailureReason::kHttp,      FailureReason::kImError,
    FailureReason::kRateLimited,    FailureReason::kPermanent, FailureReason::kUndecodable};

using core::prom::BucketOf;
using core::prom::Histogram;
using core::prom::LabelValue;
using core::prom::Simple;

const double kNaN = std::numeric_limits<double>::quiet_NaN();

}  // namespace

const char* FailureReasonName(FailureReason reason) {
  switch (reason) {
    case FailureReason::kUnknownOutcome:
      return "timeout";
    case FailureReason::kHttp:
      return "http";
    case FailureReason::kImError:
      return "im_error";
    case FailureReason::kRateLimited:
      return "rate_limited";
    case FailureReason::kPermanent:
      return "permanent";
    case FailureReason::kUndecodable:
      return "undecodable";
  }
  return "http";
}

FailureReason FailureReasonOf(const core::PublishOutcome& outcome) {
  switch (outcome.status) {
    case core::PublishStatus::kUnknown:
      return FailureReason::kUnknownOutcome;
    case core::PublishStatus::kRateLimited:
      return FailureReason::kRateLimited;
    case core::PublishStatus::kPermanent:
      return FailureReason::kPermanent;
    default:
      break;
  }
  if (outcome.http_status == 200 && outcome.im_error_code != 0) return FailureReason::kImError;
  return FailureReason::kHttp;
}

void Metrics::AddPublishFailureByReason(FailureReason reason, uint64_t n) {
  by_reason_[static_cast<size_t>(reason)].fetch_add(n, std::memory_order_relaxed);
}

void Metrics::SetBuildInfo(std::string version, std::string revision) {
  version_ = std::move(version);
  revision_ = std::move(revision);
}

int64_t Metrics::stats_age_ms() const {
  const int64_t read = stats_read_steady_ms_.load(std::memory_order_relaxed);
  return read < 0 ? -1 : std::max<int64_t>(0, clock_.SteadyMs() - read);
}

void Metrics::ObservePublishLatency(int64_t latency_ms) {
  if (latency_ms < 0) {
    latency_ms = 0;
  }
  buckets_[BucketOf(kLatencyBucketsMs, latency_ms)].fetch_add(1, std::memory_order_relaxed);
  latency_sum_ms_.fetch_add(latency_ms, std::memory_order_relaxed);
  latency_count_.fetch_add(1, std::memory_order_relaxed);
}

void Metrics::AddMessageDelivered(uint64_t events) {
  per_message_[BucketOf(kEventsPerMessageBuckets, static_cast<int64_t>(events))].fetch_add(
      1, std::memory_order_relaxed);
  messages_.fetch_add(1, std::memory_order_relaxed);
  message_events_.fetch_add(events, std::memory_order_relaxed);
}

void Metrics::SetPending(int64_t pending, int64_t oldest_pending_age_ms) {
  pending_.store(pending, std::memory_order_relaxed);
  oldest_age_ms_.store(oldest_pending_age_ms, std::memory_order_relaxed);
  // A successful read of the outbox: the database is reachable and the gauges are fresh.
  stats_read_steady_ms_.store(clock_.SteadyMs(), std::memory_order_relaxed);
  db_up_.store(1, std::memory_order_relaxed);
}

void Metrics::SetNotReadyReason(std::string reason) {
  std::lock_guard<std::mutex> lock(not_ready_mu_);
  has_not_ready_reason_.store(!reason.empty());
  not_ready_reason_ = std::move(reason);
}

void Metrics::SetDbReadOnly(std::string refusal) {
  std::lock_guard<std::mutex> lock(not_ready_mu_);
  db_read_only_.store(!refusal.empty(), std::memory_order_relaxed);
  db_read_only_refusal_ = std::move(refusal);
}

std::string Metrics::db_read_only_refusal() const {
  std::lock_guard<std::mutex> lock(not_ready_mu_);
  return db_read_only_refusal_;
}

std::string Metrics::not_ready_reason() const {
  std::lock_guard<std::mutex> lock(not_ready_mu_);
  return not_ready_reason_;
}

bool Metrics::StatsStale(int64_t stats_age_ms) const {
  return stats_age_ms < 0 || stats_age_ms > stats_stale_after_ms_;
}

void Metrics::AddRound(bool failed) {
  rounds_.fetch_add(1, std::memory_order_relaxed);
  if (failed) {
    round_errors_.fetch_add(1, std::memory_order_relaxed);
  }
}

std::string Metrics::RenderPrometheus() const {
  std::ostringstream out;
  const int64_t stats_age = stats_age_ms();
  RenderSpecified(out, stats_age);
  RenderOperations(out, stats_age);
  RenderBacklog(out, stats_age);
  RenderProcess(out);
  RenderDelivery(out);
  RenderByType(out);
  RenderLatency(out);
  return out.str();
}

// The required families (pending, oldest pending age, success, failure; the latency histogram
// comes last), and the round counters.
void Metrics::RenderSpecified(std::ostream& out, int64_t stats_age_ms) const {
  // The pending gauges are NaN (unknown) before the first read of the database and once the last
  // read is older than stats_stale_after: never a reassuring 0 while the database is down.
  const bool stale = StatsStale(stats_age_ms);
  auto gauge_or_nan = [stale](int64_t v) { return stale ? kNaN : static_cast<double>(v); };
  Simple(out, "room_outbox_pending_total", "gauge",
         "Pending rows in room_outbox (NaN while stale).", gauge_or_nan(pending()));
  Simple(out, "room_outbox_oldest_pending_age_ms", "gauge",
         "Age in milliseconds of the oldest pending row (0 when none, NaN while stale).",
         gauge_or_nan(oldest_pending_age_ms()));
  Simple(out, "room_outbox_publish_success_total", "counter",
         "Rows delivered to Tencent IM (skipped types not counted).", publish_success());
  Simple(out, "room_outbox_publish_failure_total", "counter",
         "Failed delivery attempts (the row stays pending).", publish_failure());
  Simple(out, "room_outbox_rooms_held_back", "gauge",
         "Rooms whose later rows wait behind a failed row.", rooms_held_back());
  Simple(out, "room_outbox_rounds_total", "counter", "Claim rounds run.",
         rounds_.load(std::memory_order_relaxed));
  Simple(out, "room_outbox_round_errors_total", "counter",
         "Rounds that ended with a database error or an undecodable envelope.",
         round_errors_.load(std::memory_order_relaxed));
}

// The worker's dependencies: the database, the IM breaker, failures by reason.
void Metrics::RenderOperations(std::ostream& out, int64_t stats_age_ms) const {
  out << "# HELP room_outbox_publish_failures_by_reason_total Failed delivery attempts by reason.\n"
      << "# TYPE room_outbox_publish_failures_by_reason_total counter\n";
  for (FailureReason reason : kAllReasons) {
    out << "room_outbox_publish_failures_by_reason_total{reason=\"" << FailureReasonName(reason)
        << "\"} " << publish_failure(reason) << '\n';
  }
  Simple(out, "room_outbox_db_up", "gauge",
         "1 when the worker's last database call worked, 0 when the database cannot be read.",
         db_up() ? 1 : 0);
  Simple(out, "room_outbox_db_read_only", "gauge",
         "1 while the worker's last claim or mark was refused because the database is read-only.",
         db_read_only() ? 1 : 0);
  Simple(out, "room_outbox_im_breaker_open", "gauge",
         "1 while the Tencent IM circuit breaker is open (no sends).", im_breaker_open() ? 1 : 0);
  Simple(out, "room_outbox_stats_age_seconds", "gauge",
         "Seconds since the pending gauges were last read from the database (NaN: never).",
         stats_age_ms < 0 ? kNaN : static_cast<double>(stats_age_ms) / 1000.0);
  Simple(out, "room_outbox_db_statements_total", "counter",
         "Statements this process sent to the database (prepared and text; pings not counted).",
         core::StatementsSent());
}

// The backlog and the room schedule (from the same Stats read as the pending gauges: NaN on the
// same terms), parked rows, and the app's IM budget.
void Metrics::RenderBacklog(std::ostream& out, int64_t stats_age_ms) const {
  Simple(out, "room_outbox_rooms_waiting", "gauge",
         "Rooms whose head row has been pending for over 5 s (NaN while stale).",
         StatsStale(stats_age_ms) ? kNaN : static_cast<double>(rooms_waiting()));
  Simple(out, "room_outbox_rooms_backlogged", "gauge",
         "Rooms with pending rows on the room schedule (NaN while stale).",
         StatsStale(stats_age_ms) ? kNaN : static_cast<double>(rooms_backlogged()));
  Simple(out, "room_outbox_rows_listed_total", "counter",
         "Rows this relay put on the room schedule: arrivals, and rows given back or requeued.",
         rows_listed());
  const int64_t parked = parked_rows();
  Simple(out, "room_outbox_parked_rows", "gauge", "Parked rows in room_outbox (NaN until known).",
         parked < 0 ? kNaN : static_cast<double>(parked));
  const double share = im_budget_share_.load(std::memory_order_relaxed);
  const int members = im_budget_members_.load(std::memory_order_relaxed);
  Simple(out, "room_outbox_im_budget_share_requests_per_second", "gauge",
         "This process's share of the app's IM request budget (NaN: no shared budget).",
         share < 0 ? kNaN : share);
  Simple(out, "room_outbox_im_budget_members", "gauge",
         "Live processes sharing the app's IM budget (NaN: the table cannot be read).",
         share < 0 || members < 0 ? kNaN : static_cast<double>(members));
}

// The process: rows in flight, results held, wake-ups, takeovers, the listener, the loop, the
// build.
void Metrics::RenderProcess(std::ostream& out) const {
  Simple(out, "room_outbox_in_flight_rows", "gauge", "Rows being published right now.",
         in_flight());
  Simple(out, "room_outbox_results_unwritten", "gauge",
         "Results (marks, releases) held since the database went away mid-round, written first "
         "when it answers.",
         results_unwritten());
  Simple(out, "room_outbox_wakeups_total", "counter",
         "Wake-up datagrams received on the [wake] socket.", wakeups());
  Simple(out, "room_outbox_leases_taken_over_total", "counter",
         "Rows given back from relays proven gone (their node lock free), due at once.",
         leases_taken_over());
  Simple(out, "room_outbox_metrics_connections_cut_total", "counter",
         "Connections to the metrics listener shut down at its connection deadline.",
         metrics_connections_cut());
  if (heartbeat_ != nullptr) {
    Simple(out, "room_outbox_worker_heartbeat_age_seconds", "gauge",
           "Seconds since the worker loop last completed a round or a sleep slice.",
           static_cast<double>(heartbeat_->AgeMs()) / 1000.0);
  }
  out << "# HELP room_outbox_build_info The running build (always 1).\n"
      << "# TYPE room_outbox_build_info gauge\n"
      << "room_outbox_build_info{version=\"" << LabelValue(version_) << "\",revision=\""
      << LabelValue(revision_) << "\"} 1\n";
}

// What reached the rooms: accepted messages, the events each carried, the rooms' refusals.
void Metrics::RenderDelivery(std::ostream& out) const {
  Simple(out, "room_outbox_publish_messages_total", "counter",
         "send_group_msg messages Tencent IM accepted.", messages_delivered());
  Simple(out, "room_outbox_room_refusals_total", "counter",
         "Attempts a room's group refused for now (frequency control: MsgFreqCtrl, 10023).",
         room_refusals());
  Simple(out, "room_outbox_rooms_backed_off", "gauge",
         "Rooms sent to less often than room_min_interval allows after their group refused them.",
         rooms_backed_off());
  Histogram(out, "room_outbox_publish_events_per_message",
            "Events carried by each message Tencent IM accepted.", kEventsPerMessageBuckets,
            per_message_, message_events(), messages_delivered());
}

void Metrics::TypeCounts::Add(const std::string& event_type) {
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = counts.find(event_type); it != counts.end()) ++it->second;
}

uint64_t Metrics::TypeCounts::Get(const std::string& event_type) const {
  std::lock_guard<std::mutex> lock(mu);
  auto it = counts.find(event_type);
  return it == counts.end() ? 0 : it->second;
}

void Metrics::AddExpired(const std::string& event_type) { expired_.Add(event_type); }
uint64_t Metrics::expired(const std::string& event_type) const { return expired_.Get(event_type); }

void Metrics::DeclareSkippedTypes(const std::vector<std::string>& skip_event_types) {
  std::lock_guard<std::mutex> lock(skipped_.mu);
  for (const std::string& type : skip_event_types) skipped_.counts.try_emplace(type, 0);
}
void Metrics::AddSkipped(const std::string& event_type) { skipped_.Add(event_type); }
uint64_t Metrics::skipped(const std::string& event_type) const { return skipped_.Get(event_type); }

namespace {

// A counter family labelled by event_type; no family at all when no type was declared.
void RenderTypeCounts(std::ostream& out, const char* name, const char* help,
                      const std::map<std::string, uint64_t>& counts) {
  if (counts.empty()) {
    return;
  }
  out << "# HELP " << name << ' ' << help << "\n# TYPE " << name << " counter\n";
  for (const auto& [type, n] : counts) {
    out << name << "{event_type=\"" << LabelValue(type) << "\"} " << n << '\n';
  }
}

}  // namespace

void Metrics::RenderByType(std::ostream& out) const {
  {
    std::lock_guard<std::mutex> lock(expired_.mu);
    RenderTypeCounts(out, "room_outbox_expired_total",
                     "Rows parked as expired (older than their type's max_age_by_type when their "
                     "turn came), not sent.",
                     expired_.counts);
  }
  std::lock_guard<std::mutex> lock(skipped_.mu);
  RenderTypeCounts(out, "room_outbox_skipped_total",
                   "Rows marked without a send because their type is in skip_event_types.",
                   skipped_.counts);
}

void Metrics::RenderLatency(std::ostream& out) const {
  Histogram(out, "room_outbox_publish_latency_ms",
            "Latency of each publish attempt in milliseconds.", kLatencyBucketsMs, buckets_,
            latency_sum_ms_.load(std::memory_order_relaxed), latency_count());
}

}  // namespace room_outbox::relay
