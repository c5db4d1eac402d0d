#include "core/claim_token.h"

#include <openssl/sha.h>

#include <cstdio>
#include <random>

namespace room_outbox::core {
namespace {

constexpr std::string_view kRelayTokenStart = "relay-";

// One generator per thread, seeded from the OS: no locking on the claim path.
std::mt19937_64& Generator() {
  thread_local std::mt19937_64 generator{std::random_device{}()};
  return generator;
}

// `digits` (at most 16) random lowercase hex characters.
std::string RandomHex(int digits) {
  char out[17];
  std::snprintf(out, sizeof out, "%016llx", static_cast<unsigned long long>(Generator()()));
  return std::string(out, static_cast<size_t>(digits));
}

}  // namespace

std::string NewClaimToken() { return RandomHex(16) + RandomHex(16); }

std::string ShortHash(std::string_view text) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(text.data()), text.size(), digest);
  std::string out;
  out.reserve(16);
  static constexpr char kHex[] = "0123456789abcdef";
  for (int i = 0; i < 8; ++i) {
    out.push_back(kHex[digest[i] >> 4]);
    out.push_back(kHex[digest[i] & 0x0f]);
  }
  return out;
}

std::string RelayNodeTokenPrefix(std::string_view node_id) {
  return std::string(kRelayTokenStart) + ShortHash(node_id) + "-";
}

bool IsRelayClaimToken(std::string_view token) {
  return token.substr(0, kRelayTokenStart.size()) == kRelayTokenStart;
}

std::string NewRelayRunTag() { return RandomHex(8) + "-"; }

std::string NewRelayClaimToken(std::string_view prefix) {
  return std::string(prefix) + RandomHex(12) + RandomHex(12);
}

}  // namespace room_outbox::core
