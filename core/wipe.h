// Clearing key material from memory when a string holding it is replaced or dropped: the bytes
// are overwritten (OPENSSL_cleanse, which the compiler cannot drop as a dead store) over the
// string's whole capacity, then the string is emptied.
//
// The public option structs (MysqlOptions::password, TencentImOptions::secret_key) hold plain
// std::string secrets and keep their layout (the .so.1 ABI): a copy the library keeps of them is
// a SecretOwner<T>, which wipes the secrets of the T it is whenever that T is destroyed, assigned
// over or moved from. A moved-from std::string keeps the bytes of a short secret (up to 15, in
// its own buffer), and an assignment over a longer one frees or keeps the old bytes: SecretOwner
// wipes first in each case. What it cannot reach: the caller's own copies (a HookOptions the host
// holds), a by-value copy on the stack that is not a SecretOwner, and the client libraries' own
// copies (Connector/C's, see core/mysql/mysql_handles.h).
#pragma once

#include <string>
#include <utility>

#include "room_outbox/options.h"

namespace room_outbox::core {

void WipeString(std::string& secret) noexcept;

// Replaces `secret` with `next`, wiping the old content first; the rvalue form also wipes what
// `next` kept after the move (a short secret's bytes stay in a moved-from string).
void ReplaceSecret(std::string& secret, const std::string& next);
void ReplaceSecret(std::string& secret, std::string&& next) noexcept;

// The secrets of each type a SecretOwner holds: the string itself, MysqlOptions::password,
// TencentImOptions::secret_key.
void WipeSecrets(std::string& secret) noexcept;
void WipeSecrets(MysqlOptions& options) noexcept;
void WipeSecrets(TencentImOptions& options) noexcept;

// A T (std::string, MysqlOptions, TencentImOptions: a type with a WipeSecrets overload above) that
// wipes its secrets when destroyed, assigned over or moved from. It is a T (public base), so a
// SecretOwner<MysqlOptions> is passed wherever a const MysqlOptions& is taken, and its fields
// are read and written as the T's.
template <class T>
class SecretOwner : public T {
 public:
  SecretOwner() = default;
  SecretOwner(const T& value) : T(value) {}  // NOLINT(google-explicit-constructor): a T
  SecretOwner(T&& value) noexcept : T(std::move(value)) { WipeSecrets(value); }  // NOLINT
  SecretOwner(const SecretOwner& other) : T(other) {}
  SecretOwner(SecretOwner&& other) noexcept : T(std::move(static_cast<T&>(other))) {
    WipeSecrets(static_cast<T&>(other));
  }
  ~SecretOwner() { WipeSecrets(static_cast<T&>(*this)); }

  SecretOwner& operator=(const T& other) {
    if (static_cast<const T*>(this) != &other) {
      WipeSecrets(static_cast<T&>(*this));
      static_cast<T&>(*this) = other;
    }
    return *this;
  }
  SecretOwner& operator=(T&& other) noexcept {
    if (static_cast<const T*>(this) != &other) {
      WipeSecrets(static_cast<T&>(*this));
      static_cast<T&>(*this) = std::move(other);
      WipeSecrets(other);
    }
    return *this;
  }
  SecretOwner& operator=(const SecretOwner& other) { return *this = static_cast<const T&>(other); }
  SecretOwner& operator=(SecretOwner&& other) noexcept { return *this = static_cast<T&&>(other); }
};

}  // namespace room_outbox::core
