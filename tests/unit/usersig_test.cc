#include "core/tencent/usersig.h"

#include <gtest/gtest.h>

#include <string>

namespace room_outbox {
namespace {

// Inputs of Tencent's TLSSigAPIv2 test vectors (generated with the official Python and C++
// signers).
constexpr uint64_t kAppId = 1400000000;
constexpr char kKey[] = "5bd2850fff3ecb11d7c805251c51ee463a25727bddc2385f3fa8bfee1bb93b5e";
constexpr int64_t kTime = 1700000000;

constexpr char kPythonSig[] =
    "eJyrVgrxCdYrSy1SslJQMtIzUNJRAItkpqTmlWSmZUIkKjIT87NK82CSxSnZiQUFmSlAKUMTAyiAyqVWFGQWpYJkTE1N"
    "jRDiJZm5YFFzNPXFmekgG3zKHM1T9D3LzdODi-OKs8vCqpxcAvydnV2SSv2cy03cPcpDnA2SMgu0nUxslWoBHdYzUg__";
constexpr char kCppSig[] =
    "eAGrVgrxCdYrSy1SslIy0jNQ0gHzi1OyEwsKMlOUrAxNDKAAIpOZkppXkpmWCdZQkZmYn1WaB9VUkpmbCtRgjqohtaIg"
    "swgkbmpqagSUglqQmQ600KfM0TxF37PcPD24OK84uyysysklwN-Z2SWp1M*53MTdozzE2SAps0DbycRWqRYAcDcx8g__";

struct VectorCase {
  const char* name;
  const char* identifier;
  int64_t expire;
  const char* userbuf;
  const char* tls_sig;
};

TEST(UserSigTest, GeneratedSigMatchesOfficialVectors) {
  const VectorCase cases[] = {
      {"xiaojun", "xiaojun", 15552000, "", "LvA7d/Iw7gSsnskvVzBDPOCCDbuNCw4GHwTC0bip+B4="},
      {"admin", "admin", 86400, "", "4lUxqF/B+QS/FhzU388MWw47s2GIKgpTCF1WmWL/l5Y="},
      {"userbuf", "xiaojun", 15552000, "abc", "QjT201xPkXk/aM1e+y0vakZb0K2iPrFue++0s5y6bFM="},
  };
  for (const auto& c : cases) {
    auto sig = core::GenUserSig(kAppId, c.identifier, kKey, kTime, c.expire, c.userbuf);
    ASSERT_TRUE(sig) << c.name << ": " << sig.error().message;
    EXPECT_EQ(sig->find_first_not_of(
                  "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789*-_"),
              std::string::npos)
        << c.name << ": only the IM base64 alphabet";
    auto decoded = core::DecodeUserSig(*sig);
    ASSERT_TRUE(decoded) << c.name << ": " << decoded.error().message;
    EXPECT_EQ(decoded->sig, c.tls_sig) << c.name;
    EXPECT_EQ(decoded->version, "2.0") << c.name;
    EXPECT_EQ(decoded->identifier, c.identifier) << c.name;
    EXPECT_EQ(decoded->sdk_app_id, kAppId) << c.name;
    EXPECT_EQ(decoded->time, kTime) << c.name;
    EXPECT_EQ(decoded->expire, c.expire) << c.name;
    EXPECT_EQ(decoded->userbuf.value_or(""), c.userbuf) << c.name;
    std::string why;
    EXPECT_TRUE(core::VerifyUserSig(*sig, kAppId, c.identifier, kKey, kTime + 1, &why))
        << c.name << ": " << why;
  }
}

TEST(UserSigTest, OfficialPythonAndCppSigsDecodeAndVerify) {
  const std::pair<const char*, const char*> cases[] = {{"python", kPythonSig},
                                                       {"cpp", kCppSig}};
  for (const auto& [name, sig] : cases) {
    auto decoded = core::DecodeUserSig(sig);
    ASSERT_TRUE(decoded) << name << ": " << decoded.error().message;
    EXPECT_EQ(decoded->identifier, "xiaojun") << name;
    EXPECT_EQ(decoded->sdk_app_id, kAppId) << name;
    EXPECT_EQ(decoded->time, kTime) << name;
    EXPECT_EQ(decoded->expire, 15552000) << name;
    EXPECT_EQ(decoded->sig, "LvA7d/Iw7gSsnskvVzBDPOCCDbuNCw4GHwTC0bip+B4=") << name;
    EXPECT_FALSE(decoded->userbuf.has_value()) << name;
    std::string why;
    EXPECT_TRUE(core::VerifyUserSig(sig, kAppId, "xiaojun", kKey, kTime + 3600, &why))
        << name << ": " << why;
  }
}

TEST(UserSigTest, VerifyRejectsWrongKeyIdentityAndExpiry) {
  auto sig = core::GenUserSig(kAppId, "admin", kKey, kTime, 86400);
  ASSERT_TRUE(sig);
  struct Case {
    const char* name;
    uint64_t app_id;
    const char* identifier;
    const char* key;
    int64_t now;
    const char* why;
  };
  const Case cases[] = {
      {"wrong key", kAppId, "admin", "another-secret", kTime, "usersig hmac mismatch"},
      {"wrong app", kAppId + 1, "admin", kKey, kTime, "usersig sdkappid mismatch"},
      {"wrong identifier", kAppId, "root", kKey, kTime, "usersig identifier mismatch"},
      {"expired", kAppId, "admin", kKey, kTime + 86400 + 1, "usersig expired"},
  };
  for (const auto& c : cases) {
    std::string why;
    EXPECT_FALSE(core::VerifyUserSig(*sig, c.app_id, c.identifier, c.key, c.now, &why)) << c.name;
    EXPECT_EQ(why, c.why) << c.name;
  }
  std::string why;
  EXPECT_TRUE(core::VerifyUserSig(*sig, kAppId, "admin", kKey, kTime + 86400, &why))
      << "the last second of validity still counts: " << why;
}

TEST(UserSigTest, TamperedSigFailsWithoutEchoingIt) {
  std::string sig(kPythonSig);
  const size_t positions[] = {2, sig.size() / 2, sig.size() - 4};
  for (size_t pos : positions) {
    std::string tampered = sig;
    tampered[pos] = tampered[pos] == 'A' ? 'B' : 'A';
    std::string why;
    EXPECT_FALSE(core::VerifyUserSig(tampered, kAppId, "xiaojun", kKey, kTime, &why)) << pos;
    EXPECT_FALSE(why.empty()) << pos;
    EXPECT_EQ(why.find(tampered), std::string::npos) << pos;
  }
  auto garbage = core::DecodeUserSig("not a usersig!");
  ASSERT_FALSE(garbage);
  EXPECT_EQ(garbage.error().code, ErrorCode::kInvalidArgument);
  EXPECT_FALSE(core::DecodeUserSig(""));
}

TEST(UserSigCacheTest, ReusesSigUntilCloseToExpiry) {
  int64_t now = kTime;
  // ttl 1000 s: renewal margin is 10% = 100 s.
  core::UserSigCache cache(kAppId, "admin", kKey, std::chrono::seconds(1000), [&] { return now; });
  auto first = cache.Get();
  ASSERT_TRUE(first);
  EXPECT_EQ(cache.generated_at(), kTime);

  now = kTime + 899;
  auto still = cache.Get();
  ASSERT_TRUE(still);
  EXPECT_EQ(*still, *first);
  EXPECT_EQ(cache.generated_at(), kTime);

  now = kTime + 900;
  auto renewed = cache.Get();
  ASSERT_TRUE(renewed);
  EXPECT_NE(*renewed, *first);
  EXPECT_EQ(cache.generated_at(), kTime + 900);
  auto decoded = core::DecodeUserSig(*renewed);
  ASSERT_TRUE(decoded);
  EXPECT_EQ(decoded->time, kTime + 900);
  EXPECT_EQ(decoded->expire, 1000);
}

TEST(UserSigCacheTest, MarginIsAtMostOneHour) {
  int64_t now = kTime;
  core::UserSigCache cache(kAppId, "admin", kKey, std::chrono::seconds(86400), [&] { return now; });
  ASSERT_TRUE(cache.Get());
  now = kTime + 86400 - 3601;
  ASSERT_TRUE(cache.Get());
  EXPECT_EQ(cache.generated_at(), kTime);
  now = kTime + 86400 - 3600;
  ASSERT_TRUE(cache.Get());
  EXPECT_EQ(cache.generated_at(), now);
}

TEST(UserSigCacheTest, InvalidateForcesRenewal) {
  int64_t now = kTime;
  core::UserSigCache cache(kAppId, "admin", kKey, std::chrono::seconds(86400), [&] { return now; });
  ASSERT_TRUE(cache.Get());
  now = kTime + 5;
  ASSERT_TRUE(cache.Get());
  EXPECT_EQ(cache.generated_at(), kTime);
  cache.Invalidate();
  EXPECT_EQ(cache.generated_at(), 0);
  auto fresh = cache.Get();
  ASSERT_TRUE(fresh);
  EXPECT_EQ(cache.generated_at(), kTime + 5);
  std::string why;
  EXPECT_TRUE(core::VerifyUserSig(*fresh, kAppId, "admin", kKey, now, &why)) << why;
}

TEST(UserSigCacheTest, RenewsWhenClockGoesBackwards) {
  int64_t now = kTime;
  core::UserSigCache cache(kAppId, "admin", kKey, std::chrono::seconds(86400), [&] { return now; });
  ASSERT_TRUE(cache.Get());
  now = kTime - 10;
  ASSERT_TRUE(cache.Get());
  EXPECT_EQ(cache.generated_at(), kTime - 10);
}

TEST(UserSigCacheTest, NonPositiveTtlMeansOneDay) {
  int64_t now = kTime;
  core::UserSigCache cache(kAppId, "admin", kKey, std::chrono::seconds(0), [&] { return now; });
  auto sig = cache.Get();
  ASSERT_TRUE(sig);
  auto decoded = core::DecodeUserSig(*sig);
  ASSERT_TRUE(decoded);
  EXPECT_EQ(decoded->expire, 86400);
}

}  // namespace
}  // namespace room_outbox
