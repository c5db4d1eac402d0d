// The worker's options: the [outbox_worker] section (WorkerConfig, with its defaults and its
// rules, CheckWorkerConfig) and what the relay adds to it (WorkerOptions).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/tencent/tencent_im_publisher.h"
#include "room_outbox/options.h"
#include "worker/wake_gap.h"

namespace room_outbox::relay {

// How rows of one room relate in time.
enum class Ordering {
  // At most one row of a room in flight; a failed row is not overtaken by later rows of its room.
  kPerRoom,
  // No order between rows; every claimed row may be in flight at once.
  kNone,
};

// The end of a claim's lease kept free for writing the results: a message starts only while at
// least publish_timeout + kMarkMargin of the lease is left.
inline constexpr std::chrono::milliseconds kMarkMargin{1000};
// The claim's own round trip and an answer that comes a little after its timeout.
inline constexpr std::chrono::milliseconds kClaimMargin{1000};
// lease >= publish_timeout + kLeaseMargin: a claim must hold one message (bounded by
// publish_timeout), the marking of its results and the claim itself. A shorter lease would give
// every claim back unsent.
inline constexpr std::chrono::milliseconds kLeaseMargin = kMarkMargin + kClaimMargin;

// The most IM requests the relay's publisher runs at once (its pool). A larger max_in_flight
// would queue messages behind each other, so one could take several publish_timeouts and outlive
// the lease sized for one.
inline constexpr size_t kPublisherMaxInFlight = core::kImPublisherPoolSize;

// A claim larger than this is a config mistake.
inline constexpr size_t kMaxBatchSize = 10000;

// [outbox_worker]: the five required keys (enabled, poll_interval, batch_size, publish_timeout,
// retry_strategy) with their required defaults, plus the delivery-at-scale keys. These defaults are
// the only ones.
struct WorkerConfig {
  bool enabled = true;
  std::chrono::milliseconds poll_interval{1000};
  size_t batch_size = 100;
  std::chrono::milliseconds publish_timeout{3000};
  // "" is read as "fixed_interval", the only strategy of V1.
  std::string retry_strategy = "fixed_interval";
  // Messages published at once, at most kPublisherMaxInFlight. The rate budget paces the sends;
  // this only has to hide IM's round trip: 64 carries 1,600 calls/s at a 40 ms round trip, so a
  // relay reaches an app limit bought well above the default 200/s. 1 sends one at a time.
  size_t max_in_flight = 64;
  Ordering ordering = Ordering::kPerRoom;
  // How long a claim holds its rows. At least publish_timeout + kLeaseMargin, so a claimed row
  // can be tried and marked; 30s leaves room for several waves of a batch, and a crashed relay's
  // rows are due again within half a minute.
  std::chrono::milliseconds lease{30000};
  // Minimum gap between two sends to one room: 25ms = 40 msg/s per room, Tencent IM's per-group
  // cap; a room IM refuses for frequency backs off alone from there (RoomPacing). 0 disables the
  // pacing. At most poll_interval (a claim cuts a paced room at poll_interval /
  // room_min_interval messages).
  std::chrono::milliseconds room_min_interval{25};
  // Park a row after this many attempts that failed with a permanent outcome (the publisher's
  // permanent class, an undecodable envelope, a body over the limit); 0 = never (unbounded
  // retries: no row is ever dropped). Transient failures are never parked.
  int64_t park_permanent_after = 0;
};

// The [outbox_worker] section plus the worker's wiring and internal tuning. OutboxWorker takes
// options whose WorkerConfig passes CheckWorkerConfig (LoadConfig checks it).
struct WorkerOptions : WorkerConfig {
  std::string node_id;
  // [tencent_im] skip_event_types, which the publisher delivers without a send: they take no
  // interval slot, so a claim does not count them when it cuts a busy room.
  std::vector<std::string> skip_event_types;
  // Earliest retry of a rate-limited row: max(poll_interval, this).
  std::chrono::milliseconds rate_limited_retry{1000};
  // Cap of the back-off while database errors repeat (it starts at poll_interval and doubles).
  // A fixed duration, not derived from a clock reading. It bounds how long after the database's
  // return delivery resumes, whatever the outage's length (a managed failover takes 10-30 s): a
  // failing database is tried no more often than an idle one is polled at the default
  // poll_interval, a connection attempt a second.
  std::chrono::milliseconds max_error_backoff{1000};
  // Pending/oldest gauges are refreshed from RelayStore::Stats at most once per round and at
  // most this often (monotonic).
  std::chrono::milliseconds stats_interval{1000};
  // The publisher's [tencent_im] breaker_cooldown, for the line logged when the breaker opens.
  std::chrono::milliseconds breaker_cooldown = kDefaultBreakerCooldown;
  // [wake] min_interval: the least time between the starts of two rounds a wake-up starts
  // (wake_gap.h); > 0.
  std::chrono::milliseconds wake_min_interval = kDefaultWakeMinInterval;
  // [tencent_im.max_age_by_type] (core::SharedConfig::max_age_by_type): an event of a listed type
  // older than its age when its turn to be sent comes is parked as expired (ExpiryPolicy).
  // Empty: no expiry.
  std::map<std::string, std::chrono::milliseconds> max_age_by_type;
  // [tencent_im] pack_max_events, max_body_bytes and group_id_prefix: how many consecutive events
  // of a room one message may carry, and the body size a pack stays within (PackRule).
  size_t pack_max_events = kDefaultPackMaxEvents;
  size_t max_body_bytes = kDefaultMaxBodyBytes;
  std::string group_id_prefix;

  bool per_room_order() const { return ordering == Ordering::kPerRoom; }
};

// Builds WorkerOptions from the [outbox_worker] section and the publisher's skipped types.
WorkerOptions ToWorkerOptions(const WorkerConfig& config, const std::string& node_id,
                              std::vector<std::string> skip_event_types = {},
                              std::chrono::milliseconds breaker_cooldown = kDefaultBreakerCooldown);

// A rule of WorkerConfig that a value breaks: the key (and the key to point at when that one is
// not in the file, because its default broke the rule with another key's value) and why.
struct WorkerConfigViolation {
  std::string key;
  std::string fallback_key;
  std::string what;
};

// The first rule `config` breaks, or nullopt: positive poll_interval, publish_timeout,
// batch_size (at most kMaxBatchSize) and max_in_flight (at most kPublisherMaxInFlight); a lease
// of at least publish_timeout + kLeaseMargin; 0 <= room_min_interval <= poll_interval;
// park_permanent_after >= 0. The one check of these rules.
std::optional<WorkerConfigViolation> CheckWorkerConfig(const WorkerConfig& config);

}  // namespace room_outbox::relay
