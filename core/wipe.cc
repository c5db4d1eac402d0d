#include "core/wipe.h"

#include <openssl/crypto.h>

#include <utility>

namespace room_outbox::core {

void WipeString(std::string& secret) {
  secret.resize(secret.capacity());  // within the buffer the string owns: no reallocation
  OPENSSL_cleanse(secret.data(), secret.size());
  secret.clear();
}

void ReplaceSecret(std::string& secret, std::string next) {
  WipeString(secret);
  secret = std::move(next);
}

}  // namespace room_outbox::core
