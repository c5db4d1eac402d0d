#include "support/delivery_checks.h"

#include <algorithm>
#include <utility>

namespace room_outbox::testing {

std::map<std::string, std::vector<FakeImRequest>> DeliveredByRoom(const FakeImServer& im) {
  std::vector<FakeImRequest> requests = im.Requests();
  std::stable_sort(
      requests.begin(), requests.end(),
      [](const FakeImRequest& a, const FakeImRequest& b) { return a.arrived < b.arrived; });
  std::map<std::string, std::vector<FakeImRequest>> by_room;
  for (FakeImRequest& r : requests) {
    if (r.answer != FakeImFault::Kind::kOk) continue;
    for (const FakeImEvent& event : r.events) {
      FakeImRequest one = r;
      one.event_id = event.event_id;
      one.event_type = event.event_type;
      one.room_id = event.room_id;
      one.room_seq = event.room_seq;
      one.events = {event};
      by_room[event.room_id].push_back(std::move(one));
    }
  }
  return by_room;
}

uint64_t Fnv1a(const std::string& text) {
  uint64_t hash = 1469598103934665603ULL;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 1099511628211ULL;
  }
  return hash;
}

std::optional<FakeImFault> TransientFaults::operator()(const FakeImRequest& request) {
  std::lock_guard<std::mutex> lock(mu_);
  const int attempt = attempts_[request.event_id]++;
  const uint64_t hash = Fnv1a(request.event_id + "#" + std::to_string(attempt));
  if (hash % 100 >= percent_) {
    return std::nullopt;
  }
  ++faulted_;
  return (hash >> 32) % 2 == 0 ? FakeImFault::ImError(10002, "internal error")
                               : FakeImFault::HttpStatus(502);
}

size_t TransientFaults::faulted() const {
  std::lock_guard<std::mutex> lock(mu_);
  return faulted_;
}

}  // namespace room_outbox::testing
