// Claim tokens: the name a claim (a relay's batch, or a commit's sync attempt) writes into
// room_outbox.claim_token so that only its holder can write a row's result.
#pragma once

#include <string>

namespace room_outbox::core {

// 128 random bits as 32 lowercase hex characters. Tokens only need to be unique across relays
// and hooks, not secret.
std::string NewClaimToken();

}  // namespace room_outbox::core
