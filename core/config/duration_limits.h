// The largest value of each duration key: one table, read by the config
// readers of the relay and of the hook's hosts, and stated in docs/configuration.md (the table of
// durations under "Syntax", with each default; a unit test holds the two together). A larger value
// is an error naming the key and the maximum: a timeout of "1000000h" would block commits or hold
// leased rows that long. The keys bounded by another key instead (room_min_interval and [wake]
// min_interval: at most poll_interval) are not here.
#pragma once

#include <chrono>

namespace room_outbox::core {

struct DurationLimit {
  const char* key;  // section.key as in the config file
  std::chrono::milliseconds max;
};

inline constexpr DurationLimit kMaxConnectTimeout{"mysql.connect_timeout", std::chrono::minutes(5)};
inline constexpr DurationLimit kMaxPollInterval{"outbox_worker.poll_interval",
                                                std::chrono::minutes(5)};
inline constexpr DurationLimit kMaxPublishTimeout{"outbox_worker.publish_timeout",
                                                  std::chrono::minutes(1)};
inline constexpr DurationLimit kMaxLease{"outbox_worker.lease", std::chrono::hours(1)};
inline constexpr DurationLimit kMaxUsersigTtl{"tencent_im.usersig_ttl",
                                              std::chrono::hours(24 * 30)};
inline constexpr DurationLimit kMaxBreakerCooldown{"tencent_im.breaker_cooldown",
                                                   std::chrono::hours(1)};
inline constexpr DurationLimit kMaxAgeByType{"tencent_im.max_age_by_type.*",
                                             std::chrono::hours(24 * 7)};
inline constexpr DurationLimit kMaxSyncPublishTimeout{"hook.sync_publish_timeout",
                                                      std::chrono::seconds(30)};

inline constexpr DurationLimit kDurationLimits[] = {
    kMaxConnectTimeout, kMaxPollInterval,    kMaxPublishTimeout, kMaxLease,
    kMaxUsersigTtl,     kMaxBreakerCooldown, kMaxAgeByType,      kMaxSyncPublishTimeout,
};

}  // namespace room_outbox::core
