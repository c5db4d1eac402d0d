// ThreadSanitizer builds only (cmake/sanitizers.cmake links this into every executable).
//
// libstdc++ 12 implements std::timed_mutex::try_lock_for with pthread_mutex_clocklock
// (CLOCK_MONOTONIC), which GCC 12's libtsan does not intercept: TSan never sees the lock, then
// reports "unlock of an unlocked mutex" at the unlock and false data races on everything the
// mutex guards (TencentImPublisher::mu_). This definition takes precedence over glibc's and
// forwards to pthread_mutex_timedlock, which TSan intercepts, so the lock is seen and the
// guarded accesses are checked for real instead of being suppressed.
#include <pthread.h>
#include <time.h>

#include <cerrno>
#include <cstdint>

extern "C" int pthread_mutex_clocklock(pthread_mutex_t* mutex, clockid_t clock,
                                       const struct timespec* abstime) {
  if (clock == CLOCK_REALTIME) {
    return pthread_mutex_timedlock(mutex, abstime);
  }
  if (clock != CLOCK_MONOTONIC) {
    return EINVAL;
  }
  // The same remaining time, as a CLOCK_REALTIME deadline (a wall-clock step during the wait
  // shifts it; acceptable in a test build).
  timespec mono{};
  timespec real{};
  clock_gettime(CLOCK_MONOTONIC, &mono);
  clock_gettime(CLOCK_REALTIME, &real);
  constexpr int64_t kNs = 1'000'000'000;
  const int64_t remaining = (static_cast<int64_t>(abstime->tv_sec) - mono.tv_sec) * kNs +
                            (abstime->tv_nsec - mono.tv_nsec);
  const int64_t deadline =
      static_cast<int64_t>(real.tv_sec) * kNs + real.tv_nsec + (remaining > 0 ? remaining : 0);
  const timespec until{static_cast<time_t>(deadline / kNs), static_cast<long>(deadline % kNs)};
  return pthread_mutex_timedlock(mutex, &until);
}
