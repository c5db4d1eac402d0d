// Waiting for an event in a test: poll a condition until it holds or a limit passes. Tests wait
// for what they need this way, never for a fixed time.
#pragma once

#include <chrono>
#include <functional>

namespace room_outbox::testing {

// Polls `done` every 20 ms until it holds or `limit` passes; returns whether it held (checked
// once more at the limit).
bool Eventually(const std::function<bool()>& done, std::chrono::milliseconds limit);

}  // namespace room_outbox::testing
