#include "worker/worker_options.h"

#include <utility>

#include "core/config/duration.h"

namespace room_outbox::relay {
namespace {

using std::chrono::milliseconds;

std::optional<WorkerConfigViolation> CheckTimes(const WorkerConfig& w) {
  if (w.poll_interval.count() <= 0) {
    return WorkerConfigViolation{"poll_interval", "", "must be positive"};
  }
  if (w.publish_timeout.count() <= 0) {
    return WorkerConfigViolation{"publish_timeout", "", "must be positive"};
  }
  if (w.lease < w.publish_timeout + kLeaseMargin) {
    return WorkerConfigViolation{
        "lease", "publish_timeout",
        core::FormatDuration(w.lease) + " must be at least publish_timeout (" +
            core::FormatDuration(w.publish_timeout) + ") + " + core::FormatDuration(kLeaseMargin) +
            " = " + core::FormatDuration(w.publish_timeout + kLeaseMargin) +
            ", so a claim holds one message and the marking of its results"};
  }
  if (w.room_min_interval.count() < 0) {
    return WorkerConfigViolation{"room_min_interval", "", "must not be negative"};
  }
  if (w.room_min_interval > w.poll_interval) {
    return WorkerConfigViolation{
        "room_min_interval", "poll_interval",
        core::FormatDuration(w.room_min_interval) + " must not exceed poll_interval (" +
            core::FormatDuration(w.poll_interval) +
            "): a claim sends a paced room poll_interval / room_min_interval rows"};
  }
  return std::nullopt;
}

}  // namespace

std::optional<WorkerConfigViolation> CheckWorkerConfig(const WorkerConfig& w) {
  if (w.batch_size == 0) {
    return WorkerConfigViolation{"batch_size", "", "must be positive"};
  }
  if (w.batch_size > kMaxBatchSize) {
    return WorkerConfigViolation{"batch_size", "",
                                 "must be at most " + std::to_string(kMaxBatchSize) + ", got " +
                                     std::to_string(w.batch_size)};
  }
  if (w.max_in_flight == 0) {
    return WorkerConfigViolation{"max_in_flight", "", "must be positive"};
  }
  if (w.max_in_flight > kPublisherMaxInFlight) {
    return WorkerConfigViolation{
        "max_in_flight", "",
        std::to_string(w.max_in_flight) + " is above what the IM publisher runs at once (" +
            std::to_string(kPublisherMaxInFlight) + " requests): must be at most " +
            std::to_string(kPublisherMaxInFlight)};
  }
  if (w.park_permanent_after < 0) {
    return WorkerConfigViolation{
        "park_permanent_after", "",
        "must be >= 0 (0 = never park), got " + std::to_string(w.park_permanent_after)};
  }
  return CheckTimes(w);
}

WorkerOptions ToWorkerOptions(const WorkerConfig& config, const std::string& node_id,
                              std::vector<std::string> skip_event_types,
                              milliseconds breaker_cooldown) {
  WorkerOptions o;
  static_cast<WorkerConfig&>(o) = config;
  o.node_id = node_id;
  o.skip_event_types = std::move(skip_event_types);
  o.breaker_cooldown = breaker_cooldown;
  return o;
}

}  // namespace room_outbox::relay
