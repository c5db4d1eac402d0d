// FakeStreamPublisher: a Publisher that streams as TencentImPublisher does (a message starts as
// soon as the feed hands it over while fewer than max_in_flight are out; each answer is handed to
// the feed when it comes), in the time of a FakeClock: a message is answered `latency(message)`
// after it starts, with `outcome(message)`. It records every send and every answer with its time
// and the message's event ids ("evt-1" or, for a pack, "evt-1+evt-2"), and the most messages of
// one room it ever had in flight at once. PublishMany and Publish are not used by a stream: a call
// fails the test.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/publisher.h"
#include "fake_clock.h"
#include "mock_publisher.h"

namespace room_outbox::testing {

class FakeStreamPublisher : public core::Publisher {
 public:
  struct Event {
    int64_t at = 0;  // FakeClock::SteadyMs
    std::string event_ids;
    std::string room_id;
    bool answer = false;  // false: the send
  };

  explicit FakeStreamPublisher(FakeClock& clock) : clock_(clock) {}

  std::function<std::chrono::milliseconds(const core::PublishMessage&)> latency =
      [](const core::PublishMessage&) { return std::chrono::milliseconds(10); };
  std::function<core::PublishOutcome(const core::PublishMessage&)> outcome =
      [](const core::PublishMessage&) { return Published(); };
  std::set<std::string> not_sent;  // types for which Sends() is false

  std::vector<Event> events;
  size_t most_per_room = 0;
  size_t most_in_flight = 0;

  // The sends (answer false) or answers (true) of `room_id`, their times.
  std::vector<int64_t> Times(const std::string& room_id, bool answers) const {
    std::vector<int64_t> out;
    for (const Event& e : events) {
      if (e.room_id == room_id && e.answer == answers) out.push_back(e.at);
    }
    return out;
  }

  void PublishStream(core::MessageFeed& feed, std::chrono::milliseconds,
                     size_t max_in_flight) override {
    std::vector<Flight> flights;
    for (;;) {
      while (flights.size() < max_in_flight) {
        std::optional<core::FeedMessage> next = feed.Next();
        if (!next) break;
        Start(*next, flights);
      }
      most_in_flight = std::max(most_in_flight, flights.size());
      if (flights.empty()) {
        if (!feed.Idle()) return;
        continue;
      }
      AnswerNext(feed, flights);
    }
  }

  core::PublishOutcome Publish(const core::PublishMessage&, std::chrono::milliseconds) override {
    ADD_FAILURE() << "a stream publishes through PublishStream only";
    return Published();
  }
  std::vector<core::PublishOutcome> PublishMany(std::span<const core::PublishMessage> messages,
                                                std::chrono::milliseconds, size_t) override {
    ADD_FAILURE() << "a stream publishes through PublishStream only";
    return std::vector<core::PublishOutcome>(messages.size(), Published());
  }
  bool Sends(std::string_view event_type) const override {
    return not_sent.count(std::string(event_type)) == 0;
  }
  bool breaker_open() const override { return false; }
  void ReloadSecretKey(std::string) override {}

 private:
  struct Flight {
    int64_t due = 0;
    size_t tag = 0;
    std::string event_ids;
    std::string room_id;
    core::PublishOutcome outcome;
  };

  static std::string EventIds(const core::PublishMessage& message) {
    std::string ids = message.envelope.event_id;
    for (const core::PackedEvent& event : message.rest) ids += "+" + event.envelope->event_id;
    return ids;
  }

  void Start(const core::FeedMessage& next, std::vector<Flight>& flights) {
    const core::PublishMessage& message = *next.message;
    const int64_t now = clock_.SteadyMs();
    Flight flight{now + latency(message).count(), next.tag, EventIds(message),
                  message.envelope.room_id, outcome(message)};
    events.push_back(Event{now, flight.event_ids, flight.room_id, false});
    const auto same_room = std::count_if(flights.begin(), flights.end(), [&](const Flight& f) {
      return f.room_id == flight.room_id;
    });
    most_per_room = std::max(most_per_room, static_cast<size_t>(same_room) + 1);
    flights.push_back(std::move(flight));
  }

  // Waits (in fake time) for the earliest answer, or as long as the feed's Pause allows, and
  // hands over every answer due by then, earliest first.
  void AnswerNext(core::MessageFeed& feed, std::vector<Flight>& flights) {
    std::sort(flights.begin(), flights.end(),
              [](const Flight& a, const Flight& b) { return a.due < b.due; });
    const int64_t now = clock_.SteadyMs();
    const int64_t until = std::min(flights.front().due, now + feed.Pause().count());
    if (until > now) clock_.Advance(std::chrono::milliseconds(until - now));
    while (!flights.empty() && flights.front().due <= clock_.SteadyMs()) {
      Flight flight = std::move(flights.front());
      flights.erase(flights.begin());
      events.push_back(Event{clock_.SteadyMs(), flight.event_ids, flight.room_id, true});
      feed.Done(flight.tag, std::move(flight.outcome));
    }
  }

  FakeClock& clock_;
};

}  // namespace room_outbox::testing
