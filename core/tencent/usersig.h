// Tencent IM UserSig, TLSSigAPIv2: HMAC-SHA256 over a fixed content string,
// put into a small JSON document, zlib-compressed and encoded in IM's base64 variant
// ('+' -> '*', '/' -> '-', '=' -> '_').
//
// GenUserSig builds one; DecodeUserSig and VerifyUserSig take one apart (the fake IM server in
// tests uses them, and they accept the output of every official generator: key order and zlib
// level do not matter because the content is rebuilt from the parsed fields).
// UserSigCache keeps the admin's sig and renews it before expiry or on demand (IM error 70001).
//
// None of these functions put the secret key or a sig into an error message.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "core/result.h"

namespace room_outbox::core {

// Builds a UserSig valid from `now_s` (Unix seconds) for `expire_s` seconds. The key is the
// console secret-key string's bytes as-is (not hex-decoded). `userbuf` (raw bytes) is only
// used by TRTC private map keys; leave it empty for IM REST.
// Fails (kInternal) only when OpenSSL or zlib fail, e.g. out of memory.
Result<std::string> GenUserSig(uint64_t sdk_app_id, std::string_view identifier,
                               std::string_view secret_key, int64_t now_s, int64_t expire_s,
                               std::string_view userbuf = {});

// The fields of a UserSig's JSON document.
struct DecodedUserSig {
  std::string version;                 // "TLS.ver", "2.0"
  std::string identifier;              // "TLS.identifier"
  uint64_t sdk_app_id = 0;             // "TLS.sdkappid"
  int64_t time = 0;                    // "TLS.time", Unix seconds when it was made
  int64_t expire = 0;                  // "TLS.expire", validity in seconds from `time`
  std::string sig;                     // "TLS.sig", standard base64 of the HMAC
  std::optional<std::string> userbuf;  // "TLS.userbuf" decoded to raw bytes, when present
};

// Reverses the encoding: IM base64 -> zlib -> JSON. kInvalidArgument when any step fails or a
// field is missing or of the wrong type (the message says which, never the sig itself).
Result<DecodedUserSig> DecodeUserSig(std::string_view usersig);

// True when `usersig` decodes, was made for `sdk_app_id` and `identifier`, is not expired at
// `now_s` (expired iff now_s > time + expire, as the official verifiers do) and its HMAC
// matches `secret_key` (compared in constant time). Otherwise false and, when `why` is set, a
// short reason such as "usersig expired" or "usersig hmac mismatch".
bool VerifyUserSig(std::string_view usersig, uint64_t sdk_app_id, std::string_view identifier,
                   std::string_view secret_key, int64_t now_s, std::string* why);

// The admin UserSig, generated on first use and renewed when it gets close to expiry (within
// 10% of the ttl, at most one hour) or after Invalidate(). Time comes from `now_seconds`
// (Unix seconds) so tests control it. Not thread-safe: the owner serialises calls.
class UserSigCache {
 public:
  using NowSeconds = std::function<int64_t()>;

  // `ttl` <= 0 means 86400 s, Tencent's recommended minimum validity.
  UserSigCache(uint64_t sdk_app_id, std::string identifier, std::string secret_key,
               std::chrono::seconds ttl, NowSeconds now_seconds);

  // The current sig, renewing it when due. Errors as GenUserSig.
  Result<std::string> Get();

  // The key and the cached sig are wiped from memory (wipe.h) when the cache is destroyed or
  // replaced by assignment, and an old sig when a new one replaces it.
  ~UserSigCache();
  UserSigCache(UserSigCache&&) = default;
  UserSigCache& operator=(UserSigCache&& other) noexcept;

  // Forces a new sig on the next Get(), e.g. after IM answered 70001 (sig expired). The old
  // sig is wiped.
  void Invalidate();

  // Unix seconds at which the cached sig was made (0 when none is cached).
  int64_t generated_at() const { return sig_ ? generated_at_ : 0; }

 private:
  void Wipe();

  uint64_t sdk_app_id_;
  std::string identifier_;
  std::string secret_key_;
  int64_t ttl_s_;
  int64_t renew_margin_s_;
  NowSeconds now_seconds_;
  std::optional<std::string> sig_;
  int64_t generated_at_ = 0;
};

}  // namespace room_outbox::core
