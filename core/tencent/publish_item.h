// One message of a PublishMany call as the publisher's three steps see it: admission
// (publish_admission.h), the transfer (transfer_pool.h) and the completion
// (publish_completion.h). Times are monotonic milliseconds (Clock::SteadyMs).
#pragma once

#include <cstdint>
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
};

}  // namespace room_outbox::core
