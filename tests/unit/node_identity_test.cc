// A relay's node in its claim tokens and its lock name (core/claim_token.h, store/node_lock.h):
// plain values, fixed by SHA-256 of node_id, so every process and build of a node agrees on them.
#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "core/claim_token.h"
#include "store/node_lock.h"

namespace room_outbox {
namespace {

// The expected digests are the first 16 hex characters of `sha256sum` of the node_id.
TEST(NodeIdentityTest, TheTokenPrefixIsTheNodesHashBetweenFixedMarks) {
  EXPECT_EQ(core::RelayNodeTokenPrefix("relay-a"), "relay-6165f71b38ee584b-");
  EXPECT_EQ(core::RelayNodeTokenPrefix("relay-b"), "relay-2474d0f4e5d37c2c-");
  EXPECT_EQ(core::RelayNodeTokenPrefix(""), "relay-e3b0c44298fc1c14-");
  // Any node_id, however long, gives a prefix of the same length.
  EXPECT_EQ(core::RelayNodeTokenPrefix(std::string(300, 'x')), "relay-0d4e2ca9e9cbced7-");
}

// The lock name hashes "<length of database>:<database><node_id>".
TEST(NodeIdentityTest, TheLockNameIsTheDatabasesAndNodesAndFitsMySqlsSixtyFourCharacters) {
  EXPECT_EQ(relay::NodeLockName("outbox", "relay-a"), "room_outbox.relay.ea3ff43f4b717d92");
  // Named locks are the server's: another database's relay-a is another lock.
  EXPECT_EQ(relay::NodeLockName("other", "relay-a"), "room_outbox.relay.f52eb33eeb7ac6f4");
  const std::string long_name = relay::NodeLockName("outbox", std::string(300, 'x'));
  EXPECT_EQ(long_name, "room_outbox.relay.84961425fa14ca71");
  EXPECT_LE(long_name.size(), 64u);
}

TEST(NodeIdentityTest, ARelayTokenCarriesNodeAndRunAndFitsTheColumn) {
  const std::string run = core::RelayNodeTokenPrefix("relay-a") + core::NewRelayRunTag();
  EXPECT_TRUE(std::regex_match(run, std::regex("relay-6165f71b38ee584b-[0-9a-f]{8}-")));
  const std::string token = core::NewRelayClaimToken(run);
  EXPECT_EQ(token.rfind(run, 0), 0u) << token;
  EXPECT_TRUE(std::regex_match(token, std::regex("relay-[0-9a-f]{16}-[0-9a-f]{8}-[0-9a-f]{24}")))
      << token;
  EXPECT_LE(token.size(), 64u);  // room_outbox.claim_token is VARCHAR(64)
  EXPECT_NE(core::NewRelayClaimToken(run), token);
}

TEST(NodeIdentityTest, ASyncAttemptsTokenNeverLooksLikeARelays) {
  for (int i = 0; i < 100; ++i) {
    const std::string token = core::NewClaimToken();
    ASSERT_TRUE(std::regex_match(token, std::regex("[0-9a-f]{32}"))) << token;
    ASSERT_NE(token.rfind("relay-", 0), 0u);
  }
}

TEST(NodeIdentityTest, TwoRunsOfOneNodeHaveDifferentTags) {
  EXPECT_NE(core::NewRelayRunTag(), core::NewRelayRunTag());
}

}  // namespace
}  // namespace room_outbox
