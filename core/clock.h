// Clock: time, injected so tests never read the real clock.
#pragma once

#include <cstdint>

namespace room_outbox::core {

class Clock {
 public:
  virtual ~Clock() = default;
  // Unix epoch milliseconds (information only: every absolute time the outbox compares is the
  // database server's).
  virtual int64_t NowMs() = 0;
  // Milliseconds on a monotonic clock with an arbitrary origin, for durations inside one
  // process (deadlines, pacing, the lease left of a claim). Never steps back.
  virtual int64_t SteadyMs() = 0;
};

// The wall clock and std::chrono::steady_clock.
class SystemClock : public Clock {
 public:
  int64_t NowMs() override;
  int64_t SteadyMs() override;
};

}  // namespace room_outbox::core
