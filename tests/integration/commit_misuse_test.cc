// A statements callback cannot break the commit's one transaction (MariaDbHookStore and the
// Hook against the test MariaDB): statements that end or implicitly commit it are refused with
// nothing written; one that slips through (a procedure that commits) fails the commit, and a
// retry of that command is told its events are missing, never Duplicate; a Commit from inside
// the callback of a Commit on the same Hook is refused and leaves the outer commit whole.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "room_outbox/hook.h"
#include "store/mariadb_hook_store.h"
#include "support/fake_im_server.h"
#include "support/test_database.h"

namespace room_outbox::testing {
namespace {

using ::testing::HasSubstr;

internal::CommitRequest Request(const std::string& command_id, int events) {
  internal::CommitRequest request;
  request.command.command_id = command_id;
  request.command.room_id = "room-1";
  request.command.command_type = "SendGift";
  request.command.request_id = "req-" + command_id;
  request.command.payload = "{}";
  for (int i = 0; i < events; ++i) {
    internal::NewOutboxRow row;
    row.event_id = command_id + "-e" + std::to_string(i);
    row.event_type = "RoomGiftSent";
    row.room_id = "room-1";
    row.command_id = command_id;
    row.request_id = request.command.request_id;
    row.envelope = R"({"event_id":")" + row.event_id + R"("})";
    request.rows.push_back(row);
  }
  return request;
}

int64_t Count(TestDatabase& db, const std::string& table) {
  return db.Scalar("SELECT COUNT(*) FROM " + table);
}

class CommitMisuseTest : public ::testing::TestWithParam<std::string> {};

// Each statement that would commit the command log row on its own.
INSTANTIATE_TEST_SUITE_P(
    EndsTheTransaction, CommitMisuseTest,
    ::testing::Values("COMMIT", "  commit work", "ROLLBACK", "START TRANSACTION", "BEGIN",
                      "CREATE TABLE side (a INT)", "/* note */ DROP TABLE IF EXISTS side",
                      "TRUNCATE TABLE room_outbox", "SET autocommit = 1",
                      "SET @@session.autocommit = 1", "/*!40101 COMMIT */",
                      "LOCK TABLES room_outbox WRITE"),
    [](const ::testing::TestParamInfo<std::string>& info) {
      return "Statement" + std::to_string(info.index);
    });

TEST_P(CommitMisuseTest, IsRefusedAndNothingIsWritten) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  auto store = internal::MakeMariaDbHookStore(db.Options());
  const std::string sql = GetParam();
  auto write = store->CommitCommand(Request("c1", 2), [&](Transaction& tx) {
    return tx.Execute(sql, {});
  });
  ASSERT_FALSE(write) << sql;
  EXPECT_EQ(write.error().code, ErrorCode::kInvalidArgument) << write.error().message;
  EXPECT_THAT(write.error().message, HasSubstr("caller statement refused")) << sql;
  EXPECT_EQ(Count(db, "room_command_log"), 0) << sql;
  EXPECT_EQ(Count(db, "room_outbox"), 0) << sql;
  // The retry without the statement writes the command whole.
  ASSERT_TRUE(store->CommitCommand(Request("c1", 2), {}));
  EXPECT_EQ(Count(db, "room_outbox"), 2);
}

TEST(CommitMisuseTest, AProcedureThatCommitsFailsTheCommitAndTheRetryIsNoDuplicate) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  db.Exec("CREATE PROCEDURE commits_now() BEGIN COMMIT; END");
  auto store = internal::MakeMariaDbHookStore(db.Options());
  auto write = store->CommitCommand(Request("c1", 2), [](Transaction& tx) {
    return tx.Execute("CALL commits_now()", {});
  });
  ASSERT_FALSE(write);
  EXPECT_THAT(write.error().message, HasSubstr("ended the commit's transaction"));
  // The procedure committed the command log row; no event went in after it.
  EXPECT_EQ(Count(db, "room_command_log"), 1);
  EXPECT_EQ(Count(db, "room_outbox"), 0);

  auto retry = store->CommitCommand(Request("c1", 2), {});
  ASSERT_FALSE(retry) << "a command logged without its events must not be a duplicate";
  EXPECT_THAT(retry.error().message, HasSubstr("without outbox rows"));
  EXPECT_THAT(retry.error().message, HasSubstr("c1"));
  // A command that carries no event has nothing missing: its retry is a duplicate.
  auto bare = store->CommitCommand(Request("c1", 0), {});
  ASSERT_TRUE(bare) << bare.error().message;
  EXPECT_EQ(bare->outcome, internal::CommitOutcome::kDuplicate);
}

TEST(CommitMisuseTest, ACommitFromInsideTheCallbackOfTheSameHookIsRefused) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  FakeImServer im;
  HookOptions options;
  options.mysql = db.Options();
  options.tencent_im = im.ClientOptions();
  options.sync_publish = SyncPublishMode::kOff;
  Error error;
  std::unique_ptr<Hook> hook = CreateHook(options, &error);
  ASSERT_NE(hook, nullptr) << error.message;
  const Command outer{"outer", "room-1", "SendGift", "req-outer", 1, "{}"};
  const Command inner{"inner", "room-1", "SendGift", "req-inner", 2, "{}"};
  const std::vector<Event> outer_events = {Event{"outer-e0", "RoomGiftSent", 1, 0, "{}"}};
  const std::vector<Event> inner_events = {Event{"inner-e0", "RoomGiftSent", 2, 0, "{}"}};
  CommitResult nested;
  CommitResult result = hook->Commit(outer, outer_events, [&](Transaction&) {
    nested = hook->Commit(inner, inner_events, {});
    return Status();  // the callback goes on: the outer commit must stay whole
  });
  EXPECT_EQ(nested.status, CommitStatus::kFailed);
  EXPECT_EQ(nested.error.code, ErrorCode::kInvalidArgument);
  EXPECT_THAT(nested.error.message, HasSubstr("already running on this Hook"));
  ASSERT_EQ(result.status, CommitStatus::kCommitted) << result.error.message;
  EXPECT_EQ(db.Scalar("SELECT COUNT(*) FROM room_command_log WHERE command_id = 'outer'"), 1);
  EXPECT_EQ(db.Scalar("SELECT COUNT(*) FROM room_outbox WHERE command_id = 'outer'"), 1);
  EXPECT_EQ(db.Scalar("SELECT COUNT(*) FROM room_command_log WHERE command_id = 'inner'"), 0);
  // Once the outer Commit returned, the Hook commits again.
  EXPECT_EQ(hook->Commit(inner, inner_events, {}).status, CommitStatus::kCommitted);
}

}  // namespace
}  // namespace room_outbox::testing
