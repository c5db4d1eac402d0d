// CreateHook refusing what it cannot use: an unreachable database, plain HTTP to a remote host,
// a hook that sends without the IM app's credentials; a hook that never sends (sync_publish off)
// starting without them; and a Hook that commits and is destroyed leaving no unwiped copy of its
// secrets on the heap.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "core/wipe.h"
#include "room_outbox/hook.h"
#include "support/fake_im_server.h"
#include "support/freed_secret_watch.h"
#include "support/test_database.h"

namespace room_outbox::testing {
namespace {

using std::chrono::milliseconds;

TEST(CreateHookTest, FailsFastNamingTheProblemWhenTheDatabaseIsUnreachable) {
  HookOptions options;
  options.mysql.socket = "/nonexistent/room-outbox.sock";
  options.mysql.password = "s3cret-password";
  options.mysql.connect_timeout = milliseconds(500);
  options.tencent_im.endpoint = "http://127.0.0.1:9";
  options.tencent_im.sdk_app_id = 1400000000;
  options.tencent_im.secret_key = "k";
  Error error;

  auto hook = CreateHook(options, &error);

  EXPECT_EQ(hook, nullptr);
  EXPECT_EQ(error.code, ErrorCode::kUnavailable);
  EXPECT_NE(error.message.find("room-outbox.sock"), std::string::npos) << error.message;
  EXPECT_EQ(error.message.find("s3cret-password"), std::string::npos);
}

TEST(CreateHookTest, RefusesPlainHttpToANonLoopbackHost) {
  HookOptions options;
  options.tencent_im.endpoint = "http://console.tim.qq.com";
  options.tencent_im.sdk_app_id = 1400000000;
  options.tencent_im.secret_key = "k";
  Error error;

  auto hook = CreateHook(options, &error);

  EXPECT_EQ(hook, nullptr);
  EXPECT_EQ(error.code, ErrorCode::kInvalidArgument);
  EXPECT_NE(error.message.find("tencent_im.endpoint"), std::string::npos) << error.message;
}

// A room service that only writes rows (sync_publish off) starts without any IM credential and
// leaves its events to the relay; the same options with a sync publish are refused, naming the
// first credential missing.
TEST(CreateHookTest, AHookThatNeverSendsStartsWithoutTheImCredentials) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  HookOptions options;
  options.mysql = db.Options();
  options.tencent_im.sdk_app_id = 0;
  options.tencent_im.admin_identifier.clear();
  options.tencent_im.secret_key.clear();
  options.sync_publish = SyncPublishMode::kOff;
  Error error;

  auto hook = CreateHook(options, &error);

  ASSERT_TRUE(hook) << error.message;
  CommitResult result =
      hook->Commit(Command{"nokey-cmd-1", "nokey-room-1", "SendGift", "req-1", 1, "{}"},
                   {Event{"nokey-evt-1", "RoomGiftSent", 1, 0, "{}"}});
  EXPECT_EQ(result.status, CommitStatus::kCommitted) << result.error.message;
  ASSERT_EQ(result.events.size(), 1u);
  EXPECT_EQ(result.events[0].state, DeliveryState::kPending);
  EXPECT_EQ(db.Scalar("SELECT COUNT(*) FROM room_outbox WHERE event_id = 'nokey-evt-1' AND "
                      "status = 'pending' AND claim_token IS NULL"),
            1);

  for (SyncPublishMode sends : {SyncPublishMode::kInline, SyncPublishMode::kBackground}) {
    HookOptions sending = options;
    sending.sync_publish = sends;
    EXPECT_EQ(CreateHook(sending, &error), nullptr);
    EXPECT_EQ(error.code, ErrorCode::kInvalidArgument);
    EXPECT_NE(error.message.find("tencent_im.sdk_app_id"), std::string::npos) << error.message;
    sending.tencent_im.sdk_app_id = 1400012345;
    sending.tencent_im.admin_identifier = "administrator";
    EXPECT_EQ(CreateHook(sending, &error), nullptr);
    EXPECT_NE(error.message.find("tencent_im.secret_key"), std::string::npos) << error.message;
  }
}

// The database password (short: it lives inside each std::string that holds it, so a copy in an
// object on the heap is seen) and the IM key (long: each copy has a heap buffer of its own)
// through CreateHook, a commit with its sync publish (the UserSig is signed with the key) and the
// Hook's destruction: no heap block that held either was freed unwiped (FreedSecretWatch).
TEST(CreateHookTest, AHookLeavesNoUnwipedCopyOfItsSecretsOnTheHeap) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  const std::string password = "pw-5c1e97ab";
  const std::string user = "wipe_" + db.name().substr(db.name().size() - 8);
  db.Exec("CREATE USER '" + user + "'@'localhost' IDENTIFIED BY '" + password + "'");
  db.Exec("GRANT ALL ON `" + db.name() + "`.* TO '" + user + "'@'localhost'");
  FakeImServerOptions im_options;
  im_options.secret_key = "wipe-test-im-key-0f4e2d9c8b7a6e5d4c3b2a190817263544536271";
  FakeImServer im(im_options);
  ASSERT_TRUE(im.running()) << im.start_error();
  HookOptions options;
  options.mysql = db.Options();
  options.mysql.user = user;
  options.mysql.password = password;
  options.tencent_im = im.ClientOptions();
  {
    FreedSecretWatch watch({password, im_options.secret_key});
    {
      Error error;
      auto hook = CreateHook(options, &error);
      ASSERT_TRUE(hook) << error.message;
      Command command{"wipe-cmd-1", "wipe-room-1", "SendGift", "req-1", 1, "{}"};
      CommitResult result =
          hook->Commit(command, {Event{"wipe-evt-1", "RoomGiftSent", 1, 0, "{}"}});
      EXPECT_EQ(result.status, CommitStatus::kCommitted) << result.error.message;
      ASSERT_EQ(result.events.size(), 1u);
      EXPECT_EQ(result.events[0].state, DeliveryState::kPublished) << result.events[0].error;
      EXPECT_EQ(watch.hits(), 0) << "freed unwiped while the hook runs: " << watch.HitSizes();
    }
    EXPECT_EQ(watch.hits(), 0) << "freed unwiped: " << watch.HitSizes();
    // The host's own copy is the host's to wipe.
    core::WipeSecrets(options.mysql);
    core::WipeSecrets(options.tencent_im);
  }
  db.Exec("DROP USER '" + user + "'@'localhost'");
}

}  // namespace
}  // namespace room_outbox::testing
