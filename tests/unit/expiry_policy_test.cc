// ExpiryPolicy as plain values: which rows [tencent_im.max_age_by_type] expires.
#include "worker/expiry_policy.h"

#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <string>

namespace room_outbox::relay {
namespace {

using std::chrono::milliseconds;

constexpr int64_t kNow = 1'800'000'000'000;  // the claim's server now

ExpiryPolicy GiftsAfterAMinute() {
  return ExpiryPolicy(std::map<std::string, milliseconds>{{"RoomGiftSent", milliseconds(60000)}});
}

TEST(ExpiryPolicyTest, AnEmptyTableExpiresNothing) {
  const ExpiryPolicy none({});
  EXPECT_FALSE(none.enabled());
  EXPECT_FALSE(none.Expired("RoomGiftSent", kNow - 86'400'000, false, kNow));
}

TEST(ExpiryPolicyTest, ARowOlderThanItsTypesAgeExpires) {
  const ExpiryPolicy policy = GiftsAfterAMinute();
  EXPECT_TRUE(policy.enabled());
  EXPECT_TRUE(policy.Expired("RoomGiftSent", kNow - 60001, false, kNow));
  EXPECT_TRUE(policy.Expired("RoomGiftSent", kNow - 3'600'000, false, kNow));
}

TEST(ExpiryPolicyTest, ARowOfExactlyTheAgeOrYoungerDoesNot) {
  const ExpiryPolicy policy = GiftsAfterAMinute();
  EXPECT_FALSE(policy.Expired("RoomGiftSent", kNow - 60000, false, kNow));
  EXPECT_FALSE(policy.Expired("RoomGiftSent", kNow - 1, false, kNow));
  // A created_at_ms ahead of the claim's now is a negative age.
  EXPECT_FALSE(policy.Expired("RoomGiftSent", kNow + 5000, false, kNow));
}

TEST(ExpiryPolicyTest, ATypeNotListedNeverExpires) {
  const ExpiryPolicy policy = GiftsAfterAMinute();
  EXPECT_FALSE(policy.Expired("RoomUserJoined", kNow - 86'400'000, false, kNow));
  EXPECT_FALSE(policy.Expired("roomgiftsent", kNow - 86'400'000, false, kNow));
}

TEST(ExpiryPolicyTest, ARowParkedAndRequeuedBeforeNeverExpiresAgain) {
  const ExpiryPolicy policy = GiftsAfterAMinute();
  EXPECT_FALSE(policy.Expired("RoomGiftSent", kNow - 3'600'000, true, kNow));
}

TEST(ExpiryPolicyTest, TheAgeIsTheServersNowMinusTheCommitTime) {
  const ExpiryPolicy policy = GiftsAfterAMinute();
  const int64_t created = kNow - 30000;
  EXPECT_FALSE(policy.Expired("RoomGiftSent", created, false, created + 60000));
  EXPECT_TRUE(policy.Expired("RoomGiftSent", created, false, created + 60001));
}

}  // namespace
}  // namespace room_outbox::relay
