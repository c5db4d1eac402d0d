#include "core/claim_token.h"

#include <cstdio>
#include <random>

namespace room_outbox::core {

std::string NewClaimToken() {
  // One generator per thread, seeded from the OS: no locking on the claim path.
  thread_local std::mt19937_64 generator{std::random_device{}()};
  char out[33];
  std::snprintf(out, sizeof out, "%016llx%016llx", static_cast<unsigned long long>(generator()),
                static_cast<unsigned long long>(generator()));
  return out;
}

}  // namespace room_outbox::core
