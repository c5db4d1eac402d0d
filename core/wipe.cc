#include "core/wipe.h"

#include <openssl/crypto.h>

#include <utility>

namespace room_outbox::core {

void WipeString(std::string& secret) noexcept {
  secret.resize(secret.capacity());  // within the buffer the string owns: no reallocation
  OPENSSL_cleanse(secret.data(), secret.size());
  secret.clear();
}

void ReplaceSecret(std::string& secret, const std::string& next) {
  if (&secret != &next) {
    WipeString(secret);
    secret = next;
  }
}

void ReplaceSecret(std::string& secret, std::string&& next) noexcept {
  if (&secret != &next) {
    WipeString(secret);
    secret = std::move(next);
    WipeString(next);
  }
}

void WipeSecrets(std::string& secret) noexcept { WipeString(secret); }

void WipeSecrets(MysqlOptions& options) noexcept { WipeString(options.password); }

void WipeSecrets(TencentImOptions& options) noexcept { WipeString(options.secret_key); }

}  // namespace room_outbox::core
