#include "core/tencent/usersig.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <zlib.h>

#include <algorithm>
#include <charconv>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "core/wipe.h"

namespace room_outbox::core {
namespace {

constexpr int64_t kDefaultTtlS = 86400;
constexpr int64_t kMaxRenewMarginS = 3600;
// A UserSig's JSON is around 200 bytes; anything inflating past this is not a UserSig.
constexpr size_t kMaxInflated = 64 * 1024;

std::string Base64Encode(std::string_view bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3) + 1, '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(bytes.data()),
                          static_cast<int>(bytes.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

Result<std::string> Base64Decode(std::string_view text) {
  if (text.size() % 4 != 0) {
    return Fail(ErrorCode::kInvalidArgument, "base64 length is not a multiple of 4");
  }
  std::string out(3 * (text.size() / 4), '\0');
  int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(text.data()),
                          static_cast<int>(text.size()));
  if (n < 0) {
    return Fail(ErrorCode::kInvalidArgument, "invalid base64");
  }
  // EVP_DecodeBlock counts the bytes that padding stands for as zero bytes; drop them.
  size_t padding = 0;
  for (size_t i = text.size(); i > 0 && text[i - 1] == '=' && padding < 2; --i) {
    ++padding;
  }
  out.resize(static_cast<size_t>(n) - padding);
  return out;
}

std::string Content(std::string_view identifier, uint64_t sdk_app_id, int64_t time, int64_t expire,
                    const std::optional<std::string>& userbuf_b64) {
  std::string content;
  content += "TLS.identifier:";
  content += identifier;
  content += "\nTLS.sdkappid:" + std::to_string(sdk_app_id);
  content += "\nTLS.time:" + std::to_string(time);
  content += "\nTLS.expire:" + std::to_string(expire) + "\n";
  if (userbuf_b64) {
    content += "TLS.userbuf:" + *userbuf_b64 + "\n";
  }
  return content;
}

// Standard base64 of HMAC-SHA256(key, content): the TLS.sig field.
Result<std::string> Sign(std::string_view secret_key, std::string_view content) {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int mac_len = 0;
  if (HMAC(EVP_sha256(), secret_key.data(), static_cast<int>(secret_key.size()),
           reinterpret_cast<const unsigned char*>(content.data()), content.size(), mac,
           &mac_len) == nullptr) {
    return Fail(ErrorCode::kInternal, "usersig: HMAC-SHA256 failed");
  }
  return Base64Encode(std::string_view(reinterpret_cast<const char*>(mac), mac_len));
}

Result<std::string> Inflate(std::string_view compressed) {
  std::vector<unsigned char> out(1024);
  while (true) {
    uLongf out_len = static_cast<uLongf>(out.size());
    int rc = uncompress(out.data(), &out_len, reinterpret_cast<const Bytef*>(compressed.data()),
                        static_cast<uLong>(compressed.size()));
    if (rc == Z_OK) {
      return std::string(reinterpret_cast<const char*>(out.data()), out_len);
    }
    if (rc == Z_BUF_ERROR && out.size() < kMaxInflated) {
      out.resize(out.size() * 2);
      continue;
    }
    return Fail(ErrorCode::kInvalidArgument,
                "usersig: not a zlib stream (zlib error " + std::to_string(rc) + ")");
  }
}

// Numbers are JSON numbers in every official generator; digit strings are accepted as well
// because a verifier should not be stricter than IM about layout.
template <class T>
bool ReadInteger(const nlohmann::json& doc, const char* key, T* out) {
  auto it = doc.find(key);
  if (it == doc.end()) {
    return false;
  }
  if (it->is_number_integer()) {
    *out = it->get<T>();
    return true;
  }
  if (it->is_string()) {
    const std::string& s = it->get_ref<const std::string&>();
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
    return ec == std::errc() && ptr == s.data() + s.size();
  }
  return false;
}

bool ReadString(const nlohmann::json& doc, const char* key, std::string* out) {
  auto it = doc.find(key);
  if (it == doc.end() || !it->is_string()) {
    return false;
  }
  *out = it->get<std::string>();
  return true;
}

}  // namespace

Result<std::string> GenUserSig(uint64_t sdk_app_id, std::string_view identifier,
                               std::string_view secret_key, int64_t now_s, int64_t expire_s,
                               std::string_view userbuf) {
  std::optional<std::string> userbuf_b64;
  if (!userbuf.empty()) {
    userbuf_b64 = Base64Encode(userbuf);
  }
  auto sig = Sign(secret_key, Content(identifier, sdk_app_id, now_s, expire_s, userbuf_b64));
  if (!sig) {
    return Fail(sig.error());
  }
  // The same field order as the official Python signer; the order does not matter to IM.
  nlohmann::ordered_json doc;
  doc["TLS.ver"] = "2.0";
  doc["TLS.identifier"] = std::string(identifier);
  doc["TLS.sdkappid"] = sdk_app_id;
  doc["TLS.expire"] = expire_s;
  doc["TLS.time"] = now_s;
  if (userbuf_b64) {
    doc["TLS.userbuf"] = *userbuf_b64;
  }
  doc["TLS.sig"] = *sig;
  std::string json;
  try {
    json = doc.dump();
  } catch (const nlohmann::json::exception&) {
    return Fail(ErrorCode::kInvalidArgument, "usersig: identifier is not valid UTF-8");
  }

  std::vector<unsigned char> compressed(compressBound(static_cast<uLong>(json.size())));
  uLongf compressed_len = static_cast<uLongf>(compressed.size());
  int rc =
      compress2(compressed.data(), &compressed_len, reinterpret_cast<const Bytef*>(json.data()),
                static_cast<uLong>(json.size()), Z_DEFAULT_COMPRESSION);
  if (rc != Z_OK) {
    return Fail(ErrorCode::kInternal,
                "usersig: zlib compress2 failed (" + std::to_string(rc) + ")");
  }
  std::string out = Base64Encode(
      std::string_view(reinterpret_cast<const char*>(compressed.data()), compressed_len));
  for (char& c : out) {
    if (c == '+') {
      c = '*';
    } else if (c == '/') {
      c = '-';
    } else if (c == '=') {
      c = '_';
    }
  }
  return out;
}

Result<DecodedUserSig> DecodeUserSig(std::string_view usersig) {
  std::string b64(usersig);
  for (char& c : b64) {
    if (c == '*') {
      c = '+';
    } else if (c == '-') {
      c = '/';
    } else if (c == '_') {
      c = '=';
    }
  }
  // Some encoders drop the padding; put it back so the block decoder accepts the text.
  while (b64.size() % 4 != 0) {
    b64 += '=';
  }
  auto compressed = Base64Decode(b64);
  if (!compressed) {
    return Fail(ErrorCode::kInvalidArgument, "usersig: " + compressed.error().message);
  }
  auto json_text = Inflate(*compressed);
  if (!json_text) {
    return Fail(json_text.error());
  }
  nlohmann::json doc = nlohmann::json::parse(*json_text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) {
    return Fail(ErrorCode::kInvalidArgument, "usersig: payload is not a JSON object");
  }
  DecodedUserSig out;
  if (!ReadString(doc, "TLS.ver", &out.version)) {
    return Fail(ErrorCode::kInvalidArgument, "usersig: missing or bad TLS.ver");
  }
  if (!ReadString(doc, "TLS.identifier", &out.identifier)) {
    return Fail(ErrorCode::kInvalidArgument, "usersig: missing or bad TLS.identifier");
  }
  if (!ReadInteger(doc, "TLS.sdkappid", &out.sdk_app_id)) {
    return Fail(ErrorCode::kInvalidArgument, "usersig: missing or bad TLS.sdkappid");
  }
  if (!ReadInteger(doc, "TLS.time", &out.time)) {
    return Fail(ErrorCode::kInvalidArgument, "usersig: missing or bad TLS.time");
  }
  if (!ReadInteger(doc, "TLS.expire", &out.expire)) {
    return Fail(ErrorCode::kInvalidArgument, "usersig: missing or bad TLS.expire");
  }
  if (!ReadString(doc, "TLS.sig", &out.sig)) {
    return Fail(ErrorCode::kInvalidArgument, "usersig: missing or bad TLS.sig");
  }
  if (doc.contains("TLS.userbuf")) {
    std::string userbuf_b64;
    if (!ReadString(doc, "TLS.userbuf", &userbuf_b64)) {
      return Fail(ErrorCode::kInvalidArgument, "usersig: bad TLS.userbuf");
    }
    auto raw = Base64Decode(userbuf_b64);
    if (!raw) {
      return Fail(ErrorCode::kInvalidArgument, "usersig: TLS.userbuf: " + raw.error().message);
    }
    out.userbuf = std::move(*raw);
  }
  return out;
}

bool VerifyUserSig(std::string_view usersig, uint64_t sdk_app_id, std::string_view identifier,
                   std::string_view secret_key, int64_t now_s, std::string* why) {
  auto fail = [why](std::string reason) {
    if (why != nullptr) {
      *why = std::move(reason);
    }
    return false;
  };
  auto decoded = DecodeUserSig(usersig);
  if (!decoded) {
    return fail(decoded.error().message);
  }
  if (decoded->sdk_app_id != sdk_app_id) {
    return fail("usersig sdkappid mismatch");
  }
  if (decoded->identifier != identifier) {
    return fail("usersig identifier mismatch");
  }
  // time + expire overflows for hostile fields: past INT64_MAX never expires, below MIN has.
  int64_t end = 0;
  if (__builtin_add_overflow(decoded->time, decoded->expire, &end) ? decoded->expire < 0
                                                                   : now_s > end) {
    return fail("usersig expired");
  }
  std::optional<std::string> userbuf_b64;
  if (decoded->userbuf) {
    userbuf_b64 = Base64Encode(*decoded->userbuf);
  }
  auto expected = Sign(secret_key, Content(decoded->identifier, decoded->sdk_app_id, decoded->time,
                                           decoded->expire, userbuf_b64));
  if (!expected) {
    return fail(expected.error().message);
  }
  if (expected->size() != decoded->sig.size() ||
      CRYPTO_memcmp(expected->data(), decoded->sig.data(), expected->size()) != 0) {
    return fail("usersig hmac mismatch");
  }
  return true;
}

UserSigCache::UserSigCache(uint64_t sdk_app_id, std::string identifier, std::string secret_key,
                           std::chrono::seconds ttl, NowSeconds now_seconds)
    : sdk_app_id_(sdk_app_id),
      identifier_(std::move(identifier)),
      secret_key_(std::move(secret_key)),
      ttl_s_(ttl.count() > 0 ? ttl.count() : kDefaultTtlS),
      renew_margin_s_(std::min<int64_t>(ttl_s_ / 10, kMaxRenewMarginS)),
      now_seconds_(std::move(now_seconds)) {
  WipeString(secret_key);  // what the move left in the parameter
}

void UserSigCache::Invalidate() {
  if (sig_) {
    WipeString(*sig_);
  }
  sig_.reset();
}

void UserSigCache::Wipe() {
  WipeString(secret_key_);
  if (sig_) {
    WipeString(*sig_);
  }
}

UserSigCache::~UserSigCache() { Wipe(); }

UserSigCache& UserSigCache::operator=(UserSigCache&& other) noexcept {
  if (this != &other) {
    Wipe();
    sdk_app_id_ = other.sdk_app_id_;
    identifier_ = std::move(other.identifier_);
    secret_key_ = std::move(other.secret_key_);
    ttl_s_ = other.ttl_s_;
    renew_margin_s_ = other.renew_margin_s_;
    now_seconds_ = std::move(other.now_seconds_);
    sig_ = std::move(other.sig_);
    generated_at_ = other.generated_at_;
  }
  return *this;
}

Result<std::string> UserSigCache::Get() {
  int64_t now = now_seconds_();
  // Renew well before expiry so a sig never runs out in flight, and also when the clock went
  // backwards (a sig from the "future" says nothing about how long it stays valid).
  bool due = !sig_ || now >= generated_at_ + ttl_s_ - renew_margin_s_ || now < generated_at_;
  if (due) {
    auto fresh = GenUserSig(sdk_app_id_, identifier_, secret_key_, now, ttl_s_);
    if (!fresh) {
      return Fail(fresh.error());
    }
    if (sig_) {
      ReplaceSecret(*sig_, std::move(*fresh));
    } else {
      sig_.emplace(std::move(*fresh));
      WipeString(*fresh);
    }
    generated_at_ = now;
  }
  return *sig_;
}

}  // namespace room_outbox::core
