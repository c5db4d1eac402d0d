// MariaDbHookStore::CommitCommand against the test MariaDB: one transaction for the command
// log, the outbox rows and the caller's statements, and nothing left behind by any failure.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "core/mysql/outbox_sql.h"
#include "fake_clock.h"
#include "store/mariadb_hook_store.h"
#include "support/test_database.h"

namespace room_outbox::testing {
namespace {

using ::testing::AllOf;
using ::testing::Ge;
using ::testing::Le;

internal::CommitRequest Request(const std::string& command_id, const std::string& room, int events,
                                const std::string& token = "tok-hook") {
  internal::CommitRequest request;
  request.command.command_id = command_id;
  request.command.room_id = room;
  request.command.command_type = "SendGift";
  request.command.request_id = "req-" + command_id;
  request.command.room_seq = 42;
  request.command.payload = R"({"gift":"rose"})";
  request.token = token;
  request.sync_lease = std::chrono::milliseconds(500);
  for (int i = 0; i < events; ++i) {
    internal::NewOutboxRow row;
    row.event_id = command_id + "-e" + std::to_string(i);
    row.event_type = "RoomGiftSent";
    row.room_id = room;
    row.command_id = command_id;
    row.request_id = request.command.request_id;
    row.envelope = R"({"event_id":")" + row.event_id + R"("})";
    request.rows.push_back(row);
  }
  return request;
}

int64_t ServerNowMs(TestDatabase& db) {
  return db.Scalar("SELECT " + std::string(core::sql::kServerNowMs));
}

int64_t Count(TestDatabase& db, const std::string& table) {
  return db.Scalar("SELECT COUNT(*) FROM " + table);
}

TEST(CommitCommandTest, WritesOneLogRowAndPendingOutboxRows) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  auto store = internal::MakeMariaDbHookStore(db.Options());

  const int64_t before = ServerNowMs(db);
  auto write = store->CommitCommand(Request("c1", "room-1", 3), {});
  const int64_t after = ServerNowMs(db);
  ASSERT_TRUE(write) << write.error().message;
  EXPECT_EQ(write->outcome, internal::CommitOutcome::kCommitted);
  EXPECT_FALSE(write->earlier_pending);
  EXPECT_GE(write->server_now_ms, before);
  EXPECT_LE(write->server_now_ms, after);
  ASSERT_EQ(write->row_ids.size(), 3u);
  EXPECT_LT(write->row_ids[0], write->row_ids[1]);
  EXPECT_LT(write->row_ids[1], write->row_ids[2]);

  auto log = db.Query(
      "SELECT command_id, room_id, command_type, request_id, room_seq, payload, "
      "created_at_ms FROM room_command_log");
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(*log[0][0], "c1");
  EXPECT_EQ(*log[0][1], "room-1");
  EXPECT_EQ(*log[0][2], "SendGift");
  EXPECT_EQ(*log[0][3], "req-c1");
  EXPECT_EQ(*log[0][4], "42");
  EXPECT_EQ(*log[0][5], R"({"gift":"rose"})");
  EXPECT_THAT(std::stoll(*log[0][6]), AllOf(Ge(before), Le(after)));  // the server's clock

  auto rows = db.Query(
      "SELECT id, event_id, status, retry_count, next_attempt_at_ms, "
      "claim_token, created_at_ms, updated_at_ms, last_error, published_at_ms "
      "FROM room_outbox ORDER BY id");
  ASSERT_EQ(rows.size(), 3u);
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(*rows[i][0], std::to_string(write->row_ids[i]));
    EXPECT_EQ(*rows[i][1], "c1-e" + std::to_string(i));
    EXPECT_EQ(*rows[i][2], "pending");
    EXPECT_EQ(*rows[i][3], "0");
    const int64_t created = std::stoll(*rows[i][6]);
    EXPECT_THAT(created, AllOf(Ge(before), Le(after)));
    EXPECT_EQ(std::stoll(*rows[i][4]), created + 500);  // the lease, from the server's clock
    EXPECT_EQ(*rows[i][5], "tok-hook");
    EXPECT_EQ(*rows[i][7], *rows[i][6]);
    EXPECT_FALSE(rows[i][8].has_value());
    EXPECT_FALSE(rows[i][9].has_value());
  }
}

TEST(CommitCommandTest, EmptyTokenLeavesRowsUnclaimed) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  auto store = internal::MakeMariaDbHookStore(db.Options());
  ASSERT_TRUE(store->CommitCommand(Request("c1", "room-1", 1, ""), {}));
  EXPECT_EQ(db.Scalar("SELECT COUNT(*) FROM room_outbox WHERE claim_token IS NULL"), 1);
}

TEST(CommitCommandTest, NothingIsVisibleToOthersBeforeTheCommit) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  auto store = internal::MakeMariaDbHookStore(db.Options());
  int64_t seen_log = -1;
  int64_t seen_outbox = -1;
  auto write = store->CommitCommand(Request("c1", "room-1", 2), [&](Transaction&) {
    seen_log = Count(db, "room_command_log");
    seen_outbox = Count(db, "room_outbox");
    return Status();
  });
  ASSERT_TRUE(write) << write.error().message;
  EXPECT_EQ(seen_log, 0);
  EXPECT_EQ(seen_outbox, 0);
  EXPECT_EQ(Count(db, "room_command_log"), 1);
  EXPECT_EQ(Count(db, "room_outbox"), 2);
}

TEST(CommitCommandTest, KilledConnectionMidTransactionLeavesNothingAndNextCallReconnects) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  auto store = internal::MakeMariaDbHookStore(db.Options());
  ASSERT_TRUE(store->Connect());
  const uint64_t first_id = store->connection_id();
  ASSERT_NE(first_id, 0u);
  // The processlist agrees on which connection is the store's.
  EXPECT_EQ(db.Scalar("SELECT COUNT(*) FROM information_schema.processlist WHERE db='" + db.name() +
                      "' AND id <> CONNECTION_ID() AND id = " + std::to_string(first_id)),
            1);

  auto write = store->CommitCommand(Request("c1", "room-1", 2), [&](Transaction& tx) {
    db.Exec("KILL " + std::to_string(first_id));
    return tx.Execute("SELECT 1", {});
  });
  ASSERT_FALSE(write);
  EXPECT_EQ(write.error().code, ErrorCode::kUnavailable) << write.error().message;
  EXPECT_FALSE(store->connected());
  EXPECT_EQ(Count(db, "room_command_log"), 0);
  EXPECT_EQ(Count(db, "room_outbox"), 0);

  auto again = store->CommitCommand(Request("c1", "room-1", 2), {});
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_EQ(again->outcome, internal::CommitOutcome::kCommitted);
  EXPECT_NE(store->connection_id(), first_id);
  EXPECT_EQ(Count(db, "room_command_log"), 1);
  EXPECT_EQ(Count(db, "room_outbox"), 2);
}

TEST(CommitCommandTest, KilledConnectionBeforeCommitFailsTheCommit) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  auto store = internal::MakeMariaDbHookStore(db.Options());
  ASSERT_TRUE(store->Connect());
  auto write = store->CommitCommand(Request("c1", "room-1", 1), [&](Transaction&) {
    db.Exec("KILL " + std::to_string(store->connection_id()));
    return Status();  // the failure surfaces before COMMIT is sent
  });
  ASSERT_FALSE(write);
  EXPECT_EQ(write.error().code, ErrorCode::kUnavailable) << write.error().message;
  EXPECT_EQ(Count(db, "room_command_log"), 0);
  EXPECT_EQ(Count(db, "room_outbox"), 0);
  ASSERT_TRUE(store->CommitCommand(Request("c2", "room-1", 1), {}));
  EXPECT_EQ(Count(db, "room_outbox"), 1);
}

TEST(CommitCommandTest, DuplicateCommandIdWritesNothingNew) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  auto store = internal::MakeMariaDbHookStore(db.Options());
  ASSERT_TRUE(store->CommitCommand(Request("c1", "room-1", 2), {}));

  internal::CommitRequest repeat = Request("c1", "room-1", 2);
  for (auto& row : repeat.rows) {
    row.event_id += "-retry";  // fresh event ids: only command_id makes it a repeat
  }
  bool caller_ran = false;
  auto write = store->CommitCommand(repeat, [&](Transaction&) {
    caller_ran = true;
    return Status();
  });
  ASSERT_TRUE(write) << write.error().message;
  EXPECT_EQ(write->outcome, internal::CommitOutcome::kDuplicate);
  EXPECT_TRUE(write->row_ids.empty());
  EXPECT_FALSE(caller_ran);
  EXPECT_EQ(Count(db, "room_command_log"), 1);
  EXPECT_EQ(Count(db, "room_outbox"), 2);
  // The connection stays usable after the rolled-back duplicate.
  ASSERT_TRUE(store->CommitCommand(Request("c2", "room-1", 1), {}));
  EXPECT_EQ(Count(db, "room_outbox"), 3);
}

TEST(CommitCommandTest, DuplicateEventIdOfAnotherCommandFailsAndRollsBack) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  auto store = internal::MakeMariaDbHookStore(db.Options());
  ASSERT_TRUE(store->CommitCommand(Request("c1", "room-1", 1), {}));
  internal::CommitRequest other = Request("c2", "room-1", 2);
  other.rows[1].event_id = "c1-e0";
  auto write = store->CommitCommand(other, {});
  ASSERT_FALSE(write);
  EXPECT_EQ(write.error().code, ErrorCode::kAlreadyExists);
  EXPECT_NE(write.error().message.find("insert_outbox"), std::string::npos)
      << write.error().message;
  EXPECT_EQ(Count(db, "room_command_log"), 1);
  EXPECT_EQ(Count(db, "room_outbox"), 1);
  EXPECT_EQ(db.Scalar("SELECT COUNT(*) FROM room_command_log WHERE command_id='c2'"), 0);
}

TEST(CommitCommandTest, FailingCallerStatementRollsBackLogAndOutbox) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  auto store = internal::MakeMariaDbHookStore(db.Options());
  auto write = store->CommitCommand(Request("c1", "room-1", 2), [](Transaction& tx) {
    return tx.Execute("INSERT INTO no_such_table (a) VALUES (?)", {int64_t{1}});
  });
  ASSERT_FALSE(write);
  EXPECT_EQ(write.error().code, ErrorCode::kNotFound) << write.error().message;
  EXPECT_EQ(Count(db, "room_command_log"), 0);
  EXPECT_EQ(Count(db, "room_outbox"), 0);
  EXPECT_TRUE(store->connected());  // a statement error does not cost the connection
  ASSERT_TRUE(store->CommitCommand(Request("c1", "room-1", 2), {}));
  EXPECT_EQ(Count(db, "room_outbox"), 2);
}

TEST(CommitCommandTest, IgnoredCallerStatementFailureStillRollsBack) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  db.Exec("CREATE TABLE snapshot (room_id VARCHAR(64) PRIMARY KEY, seq BIGINT NOT NULL)");
  auto store = internal::MakeMariaDbHookStore(db.Options());
  auto write = store->CommitCommand(Request("c1", "room-1", 1), [](Transaction& tx) {
    (void)tx.Execute("INSERT INTO snapshot (room_id, seq) VALUES (?, ?)",
                     {std::string("room-1"), std::monostate{}});  // NOT NULL violated
    return tx.Execute("INSERT INTO snapshot (room_id, seq) VALUES (?, ?)",
                      {std::string("room-2"), int64_t{1}});
  });
  ASSERT_FALSE(write);
  EXPECT_EQ(Count(db, "room_command_log"), 0);
  EXPECT_EQ(Count(db, "room_outbox"), 0);
  EXPECT_EQ(Count(db, "snapshot"), 0);
}

TEST(CommitCommandTest, CallerStatementsCommitTogetherWithTheCommand) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  db.Exec(
      "CREATE TABLE snapshot (room_id VARCHAR(64) PRIMARY KEY, seq BIGINT, heat DOUBLE, "
      "note VARCHAR(64))");
  auto store = internal::MakeMariaDbHookStore(db.Options());
  auto write = store->CommitCommand(Request("c1", "房间-1", 1), [](Transaction& tx) {
    Status s = tx.Execute("INSERT INTO snapshot (room_id, seq, heat, note) VALUES (?, ?, ?, ?)",
                          {std::string("房间-1"), int64_t{42}, 2.5, std::monostate{}});
    if (!s.ok()) {
      return s;
    }
    // A SELECT inside the callback is allowed and sees the transaction's own writes.
    return tx.Execute("SELECT seq FROM snapshot WHERE room_id = ?", {std::string("房间-1")});
  });
  ASSERT_TRUE(write) << write.error().message;
  auto rows = db.Query("SELECT room_id, seq, heat, note FROM snapshot");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(*rows[0][0], "房间-1");
  EXPECT_EQ(*rows[0][1], "42");
  EXPECT_EQ(*rows[0][2], "2.5");
  EXPECT_FALSE(rows[0][3].has_value());
  EXPECT_EQ(Count(db, "room_outbox"), 1);
}

TEST(CommitCommandTest, CallerStatementWithWrongParameterCountFails) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  auto store = internal::MakeMariaDbHookStore(db.Options());
  auto write = store->CommitCommand(Request("c1", "room-1", 1), [](Transaction& tx) {
    return tx.Execute("SELECT ? + ?", {int64_t{1}});
  });
  ASSERT_FALSE(write);
  EXPECT_EQ(write.error().code, ErrorCode::kInvalidArgument) << write.error().message;
  EXPECT_EQ(Count(db, "room_outbox"), 0);
}

TEST(CommitCommandTest, ThrowingCallerStatementsRollBack) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  auto store = internal::MakeMariaDbHookStore(db.Options());
  auto write = store->CommitCommand(Request("c1", "room-1", 1), [](Transaction&) -> Status {
    throw std::runtime_error("snapshot encoder broke");
  });
  ASSERT_FALSE(write);
  EXPECT_EQ(write.error().code, ErrorCode::kInternal);
  EXPECT_NE(write.error().message.find("snapshot encoder broke"), std::string::npos);
  EXPECT_EQ(Count(db, "room_command_log"), 0);
  EXPECT_EQ(Count(db, "room_outbox"), 0);
}

TEST(CommitCommandTest, TypesNeverSentAreWrittenPublishedInTheCommitItself) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  auto store = internal::MakeMariaDbHookStore(db.Options());
  internal::CommitRequest request = Request("c1", "room-1", 3);
  request.rows[1].event_type = "RoomHeatChanged";
  request.rows[1].published = true;
  const int64_t before = ServerNowMs(db);
  auto write = store->CommitCommand(request, {});
  ASSERT_TRUE(write) << write.error().message;
  ASSERT_EQ(write->row_ids.size(), 3u);

  auto rows = db.Query(
      "SELECT status, claim_token, published_at_ms, retry_count FROM room_outbox ORDER BY id");
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(*rows[0][0], "pending");
  EXPECT_EQ(*rows[1][0], "published");
  EXPECT_FALSE(rows[1][1].has_value());  // nobody holds it
  ASSERT_TRUE(rows[1][2].has_value());
  EXPECT_GE(std::stoll(*rows[1][2]), before);
  EXPECT_EQ(*rows[1][3], "0");
  EXPECT_EQ(*rows[2][0], "pending");
}

TEST(CommitCommandTest, EarlierPendingIsReadInsideTheTransaction) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  auto store = internal::MakeMariaDbHookStore(db.Options());
  auto first = store->CommitCommand(Request("c1", "直播间-一号", 1), {});
  ASSERT_TRUE(first) << first.error().message;
  EXPECT_FALSE(first->earlier_pending);

  auto second = store->CommitCommand(Request("c2", "直播间-一号", 1), {});
  ASSERT_TRUE(second) << second.error().message;
  EXPECT_TRUE(second->earlier_pending);

  auto other_room = store->CommitCommand(Request("c3", "room-🎉", 1), {});
  ASSERT_TRUE(other_room);
  EXPECT_FALSE(other_room->earlier_pending);

  internal::CommitRequest unordered = Request("c4", "直播间-一号", 1);
  unordered.check_earlier_pending = false;
  auto fourth = store->CommitCommand(unordered, {});
  ASSERT_TRUE(fourth);
  EXPECT_FALSE(fourth->earlier_pending);

  // Published rows of the room do not count.
  db.Exec("UPDATE room_outbox SET status = 'published'");
  internal::CommitRequest skipped_only = Request("c5", "直播间-一号", 1);
  skipped_only.rows[0].published = true;
  ASSERT_TRUE(store->CommitCommand(skipped_only, {}));
  auto sixth = store->CommitCommand(Request("c6", "直播间-一号", 1), {});
  ASSERT_TRUE(sixth);
  EXPECT_FALSE(sixth->earlier_pending);
}

TEST(CommitCommandTest, OutboxRowsAreInsertedAfterTheCallersStatements) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  db.Exec("CREATE TABLE probe (log_rows BIGINT NOT NULL, outbox_rows BIGINT NOT NULL)");
  FakeClock clock;
  const int64_t start_ms = clock.SteadyMs();
  auto store = internal::MakeMariaDbHookStore(db.Options(), clock);
  auto write = store->CommitCommand(Request("c1", "room-1", 2), [&clock](Transaction& tx) {
    clock.Advance(std::chrono::milliseconds(1000));  // the caller's statements take a second
    return tx.Execute(
        "INSERT INTO probe SELECT (SELECT COUNT(*) FROM room_command_log), "
        "(SELECT COUNT(*) FROM room_outbox)",
        {});
  });
  ASSERT_TRUE(write) << write.error().message;
  // The caller saw its command logged and no outbox row yet: the sync lease starts after them.
  auto probe = db.Query("SELECT log_rows, outbox_rows FROM probe");
  ASSERT_EQ(probe.size(), 1u);
  EXPECT_EQ(*probe[0][0], "1");
  EXPECT_EQ(*probe[0][1], "0");
  EXPECT_EQ(Count(db, "room_outbox"), 2);
  // The store's clock read after the caller's statements: the hook's deadline counts from there.
  EXPECT_EQ(write->lease_start_ms, start_ms + 1000);
}

TEST(CommitCommandTest, AConnectionIdleForThePingIntervalIsPingedAndReplacedWhenDead) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  FakeClock clock;
  auto store = internal::MakeMariaDbHookStore(db.Options(), clock);
  ASSERT_TRUE(store->Connect());
  const uint64_t first = store->connection_id();
  db.Exec("KILL " + std::to_string(first));  // e.g. the server's idle timeout
  clock.Advance(core::StoreSession::kPingAfterIdle);
  auto found = store->FindCommand("c-none");
  ASSERT_TRUE(found) << "pinged, found dead and replaced before the call: "
                     << found.error().message;
  EXPECT_FALSE(found->has_value());
  EXPECT_NE(store->connection_id(), first);
}

TEST(CommitCommandTest, AConnectionIdleForLessThanThePingIntervalIsUsedAsItIs) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  FakeClock clock;
  auto store = internal::MakeMariaDbHookStore(db.Options(), clock);
  ASSERT_TRUE(store->Connect());
  const uint64_t first = store->connection_id();
  db.Exec("KILL " + std::to_string(first));
  clock.Advance(core::StoreSession::kPingAfterIdle - std::chrono::milliseconds(1));
  auto failed = store->FindCommand("c-none");
  ASSERT_FALSE(failed) << "no ping: the call meets the dead connection";
  EXPECT_EQ(failed.error().code, ErrorCode::kUnavailable);
  auto again = store->FindCommand("c-none");
  ASSERT_TRUE(again) << "the next call reconnects: " << again.error().message;
  EXPECT_NE(store->connection_id(), first);
}

// A server that restarted or failed over closed every connection: once one store met that, the
// others ping theirs before their next call instead of failing it.
TEST(CommitCommandTest, AConnectionFaultOfOneStoreMakesTheOthersPingBeforeTheirNextCall) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  FakeClock clock;
  auto a = internal::MakeMariaDbHookStore(db.Options(), clock);
  auto b = internal::MakeMariaDbHookStore(db.Options(), clock);
  ASSERT_TRUE(a->Connect());
  ASSERT_TRUE(b->Connect());
  const uint64_t b_first = b->connection_id();
  db.Exec("KILL " + std::to_string(a->connection_id()));
  db.Exec("KILL " + std::to_string(b_first));
  auto failed = a->FindCommand("c-none");
  ASSERT_FALSE(failed) << "a meets the dead connection";
  EXPECT_EQ(failed.error().code, ErrorCode::kUnavailable);
  auto found = b->FindCommand("c-none");
  ASSERT_TRUE(found) << "b pinged after a's fault and replaced its connection: "
                     << found.error().message;
  EXPECT_NE(b->connection_id(), b_first);
}

TEST(CommitCommandTest, FindCommandReadsACommittedCommandsRowsBackInOrder) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  auto store = internal::MakeMariaDbHookStore(db.Options());
  auto write = store->CommitCommand(Request("c1", "room-1", 3), {});
  ASSERT_TRUE(write);
  ASSERT_TRUE(store->CommitCommand(Request("c2", "room-1", 2), {}));

  auto found = store->FindCommand("c1");
  ASSERT_TRUE(found) << found.error().message;
  ASSERT_TRUE(found->has_value());
  EXPECT_EQ((*found)->row_ids, write->row_ids);

  auto missing = store->FindCommand("never");
  ASSERT_TRUE(missing) << missing.error().message;
  EXPECT_FALSE(missing->has_value());
}

// The lookup after a lost COMMIT answer may reach the server before the command's transaction
// ended there; its locking read waits for that end instead of reading "absent" too early.
void FindWhileAnotherTransactionHoldsTheCommand(const std::string& ending, bool expect_found) {
  TestDatabase db;
  ASSERT_TRUE(db.valid());
  auto store = internal::MakeMariaDbHookStore(db.Options());
  ASSERT_TRUE(store->Connect());
  db.Exec("BEGIN");
  db.Exec(
      "INSERT INTO room_command_log (command_id, room_id, command_type, payload, created_at_ms) "
      "VALUES ('c-open', 'room-1', 'T', '{}', 0)");
  std::thread ender([&db, ending] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    db.Exec(ending);
  });
  auto found = store->FindCommand("c-open");
  ender.join();
  ASSERT_TRUE(found) << found.error().message;
  EXPECT_EQ(found->has_value(), expect_found);
}

TEST(CommitCommandTest, FindCommandWaitsForAnOpenTransactionThatCommits) {
  FindWhileAnotherTransactionHoldsTheCommand("COMMIT", true);
}

TEST(CommitCommandTest, FindCommandWaitsForAnOpenTransactionThatRollsBack) {
  FindWhileAnotherTransactionHoldsTheCommand("ROLLBACK", false);
}

}  // namespace
}  // namespace room_outbox::testing
