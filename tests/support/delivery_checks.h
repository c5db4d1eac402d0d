// What delivery tests share: the fake IM's accepted requests grouped by room, and a
// deterministic transient-fault plan for the fake.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "support/fake_im_server.h"

namespace room_outbox::testing {

// The events of the requests the fake answered OK, per room, in arrival order: one record per
// event (a packed message's events in their order, each with the message's arrival, Random and
// answer, `events` holding only that event).
std::map<std::string, std::vector<FakeImRequest>> DeliveredByRoom(const FakeImServer& im);

// 64-bit FNV-1a: a stable pseudo-random choice per (event, attempt), the same on every run.
uint64_t Fnv1a(const std::string& text);

// Fails a deterministic ~`percent`% of all attempts with a transient answer (IM 10002 or HTTP
// 502, alternating by hash). The choice depends on the event and how often it was tried before,
// so a faulted row eventually gets through. Thread-safe (the fake calls it from handler threads).
class TransientFaults {
 public:
  explicit TransientFaults(uint64_t percent) : percent_(percent) {}

  std::optional<FakeImFault> operator()(const FakeImRequest& request);
  size_t faulted() const;

 private:
  const uint64_t percent_;
  mutable std::mutex mu_;
  std::map<std::string, int> attempts_;
  size_t faulted_ = 0;
};

}  // namespace room_outbox::testing
