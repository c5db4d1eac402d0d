// One message of a PublishMany call or a PublishStream as the publisher's three steps see it:
// admission (publish_admission.h), the transfer (transfer_pool.h) and the completion
// (publish_completion.h). Times are monotonic milliseconds (Clock::SteadyMs). The items of a call
// live in a deque: a stream appends to it while transfers point into the bodies of earlier ones.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>

#include "core/publisher.h"

namespace room_outbox::core {

struct PublishItem {
  std::string body;        // the request body; it must stay put while its transfer runs
  PublishOutcome outcome;  // final once `done`
  bool done = false;
  bool started = false;      // its timeout runs: start_ms and deadline_ms are set
  bool sig_renewed = false;  // IM said 70001 once: the sig was renewed and the body resent
  bool probe = false;        // the breaker let it through as its probe, not yet recorded
  int64_t start_ms = 0;
  int64_t deadline_ms = 0;  // start_ms + the call's timeout
  // A stream's message: its timeout counts from `ready_ms`, when the feed handed it over (a
  // PublishMany message counts from the call's start or its slot: PublishAdmission).
  bool streamed = false;
  int64_t ready_ms = 0;
  size_t feed_tag = 0;    // a stream's message: its MessageFeed tag
  bool reported = false;  // a stream's message: its outcome was handed to MessageFeed::Done
};

using PublishItems = std::deque<PublishItem>;

}  // namespace room_outbox::core
