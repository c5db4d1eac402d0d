// Claim tokens: the name a claim (a relay's batch, or a commit's sync attempt) writes into
// room_outbox.claim_token (VARCHAR(64)) so that only its holder can write a row's result.
//
// Two forms, told apart by their first characters:
//   a commit's sync attempt, and a relay run by `--once`: 32 lowercase hex characters (128 random
//     bits), never starting with "relay-";
//   a relay daemon: "relay-<16 hex: the node>-<8 hex: the run>-<24 hex: random>" (56 characters).
//     The node part is fixed by node_id (RelayNodeTokenPrefix), so a relay that holds its node's
//     lock (relay/src/store/node_lock.h) finds the rows leased under its node_id by an earlier
//     run and gives them back; the run part tells its own leases from theirs.
#pragma once

#include <string>
#include <string_view>

namespace room_outbox::core {

// 128 random bits as 32 lowercase hex characters. Tokens only need to be unique across relays
// and hooks, not secret.
std::string NewClaimToken();

// "relay-" + the first 16 hex characters of SHA-256(node_id) + "-" (23 characters): the part of
// every token a relay daemon with this node_id writes. The same node_id gives the same prefix in
// every process and build.
std::string RelayNodeTokenPrefix(std::string_view node_id);

// 8 random hex characters + "-": a run's part of its tokens, drawn once per process.
std::string NewRelayRunTag();

// `prefix` + 24 random lowercase hex characters: a relay daemon's claim token, where `prefix` is
// RelayNodeTokenPrefix + the run's tag (32 characters).
std::string NewRelayClaimToken(std::string_view prefix);

// True for a relay daemon's token (it starts with "relay-"), false for a commit's sync attempt or
// a `--once` run's.
bool IsRelayClaimToken(std::string_view token);

// The first 16 hex characters of SHA-256(text): the stable short name of a node_id (token prefix,
// lock name).
std::string ShortHash(std::string_view text);

}  // namespace room_outbox::core
