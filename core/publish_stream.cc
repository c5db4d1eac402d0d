// Publisher::PublishStream's default: the stream in waves over PublishMany.
#include <algorithm>
#include <string>
#include <vector>

#include "core/publisher.h"

namespace room_outbox::core {

void Publisher::PublishStream(MessageFeed& feed, std::chrono::milliseconds timeout,
                              size_t max_in_flight) {
  const size_t wave_limit = std::max<size_t>(max_in_flight, 1);
  std::vector<FeedMessage> wave;
  std::vector<PublishMessage> messages;
  for (;;) {
    wave.clear();
    while (wave.size() < wave_limit) {
      std::optional<FeedMessage> next = feed.Next();
      if (!next) break;
      wave.push_back(*next);
    }
    if (wave.empty()) {
      if (!feed.Idle()) return;
      continue;
    }
    messages.clear();
    for (const FeedMessage& item : wave) messages.push_back(*item.message);
    std::vector<PublishOutcome> outcomes = PublishMany(messages, timeout, max_in_flight);
    for (size_t i = 0; i < wave.size(); ++i) {
      PublishOutcome outcome;
      if (i < outcomes.size()) {
        outcome = std::move(outcomes[i]);
      } else {
        outcome.status = PublishStatus::kUnknown;
        outcome.error = "publisher returned " + std::to_string(outcomes.size()) + " outcomes for " +
                        std::to_string(wave.size()) + " messages";
      }
      feed.Done(wave[i].tag, std::move(outcome));
    }
    if (!feed.Idle()) return;  // nothing is in flight between two waves
  }
}

}  // namespace room_outbox::core
