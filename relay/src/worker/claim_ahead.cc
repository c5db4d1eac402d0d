#include "worker/claim_ahead.h"

#include <utility>

namespace room_outbox::relay {

ClaimAhead::~ClaimAhead() {
  if (future_.valid()) future_.wait();
}

void ClaimAhead::Start(const ClaimOptions& options) {
  if (future_.valid()) return;
  // The lease runs from before the call (read here, on the owner's thread, so the clock is
  // only ever read by one thread): a slow claim, or a slow thread start, leaves less of it.
  const int64_t claimed_at = clock_.SteadyMs();
  future_ = std::async(std::launch::async, [this, options, claimed_at]() {
    return Taken{store_.ClaimDue(options), claimed_at, true};
  });
}

std::optional<ClaimAhead::Taken> ClaimAhead::Take() {
  if (!future_.valid()) return std::nullopt;
  return future_.get();
}

}  // namespace room_outbox::relay
