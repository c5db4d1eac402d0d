// The hook at its seams (store, publisher, clock): every acceptance row of the seed that
// concerns the command path.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "claim_token.h"
#include "fake_clock.h"
#include "hook_impl.h"
#include "mock_outbox_store.h"
#include "mock_publisher.h"

namespace room_outbox::testing {
namespace {

using ::testing::_;
using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::NiceMock;
using ::testing::Return;
using ::testing::StrictMock;

MATCHER_P(IdsAre, expected, "") {
  return std::vector<int64_t>(arg.begin(), arg.end()) == expected;
}

class HookTest : public ::testing::Test {
 protected:
  HookTest() {
    auto store = std::make_unique<StrictMock<MockOutboxStore>>();
    auto publisher = std::make_unique<StrictMock<MockPublisher>>();
    store_ = store.get();
    publisher_ = publisher.get();
    HookOptions options;
    options.node_id = "node-a";
    options.sync_publish_timeout = std::chrono::milliseconds(250);
    options.log = [this](LogLevel, std::string_view line) { logs_.emplace_back(line); };
    hook_ = internal::MakeHook(options, std::move(store), std::move(publisher),
                               std::make_unique<FakeClock>(1'000'000));
  }

  static Command JoinCommand() {
    return Command{"cmd-1", "room-1", "JoinRoom", "req-1", 5, R"({"user":"u1"})"};
  }
  static std::vector<Event> JoinEvents() {
    return {Event{"evt-1", "RoomUserJoined", 5, 0, R"({"user":"u1"})"},
            Event{"evt-2", "RoomHeatChanged", 5, 0, R"({"heat":10})"}};
  }
  void ExpectCommit(std::vector<int64_t> ids) {
    EXPECT_CALL(*store_, CommitCommand(_, _))
        .WillOnce([this, ids](const CommitRequest& request, const CallerStatements&) {
          last_request_ = request;
          return CommitWrite{false, ids};
        });
  }

  StrictMock<MockOutboxStore>* store_;
  StrictMock<MockPublisher>* publisher_;
  std::unique_ptr<Hook> hook_;
  CommitRequest last_request_;
  std::vector<std::string> logs_;
};

TEST_F(HookTest, SyncFailureStillReportsCommittedAndLeavesRowsPendingUncounted) {
  ExpectCommit({11, 12});
  EXPECT_CALL(*store_, HasEarlierPending("room-1", 11)).WillOnce(Return(false));
  EXPECT_CALL(*publisher_, Publish(Field(&Envelope::event_id, "evt-1"),
                                   std::chrono::milliseconds(250)))
      .WillOnce(Return(FailedWith(PublishStatus::kRetryable, "HTTP 502")));
  // The second event must not overtake the failed first one: it is not attempted.
  // The rows go back to the relay unattempted: Release, never MarkFailed (a StrictMock fails on
  // any unexpected call), so retry_count stays 0.
  EXPECT_CALL(*store_, Release(_, IdsAre(std::vector<int64_t>{11, 12})))
      .WillOnce(Return(size_t{2}));

  CommitResult result = hook_->Commit(JoinCommand(), JoinEvents());

  EXPECT_EQ(result.status, CommitStatus::kCommitted);
  ASSERT_EQ(result.events.size(), 2u);
  EXPECT_EQ(result.events[0].state, DeliveryState::kPending);
  EXPECT_EQ(result.events[0].error, "HTTP 502");
  EXPECT_EQ(result.events[1].state, DeliveryState::kPending);
}

TEST_F(HookTest, CommitWritesEnvelopesLeasedForTheSyncWindow) {
  ExpectCommit({11, 12});
  EXPECT_CALL(*store_, HasEarlierPending(_, _)).WillOnce(Return(false));
  EXPECT_CALL(*publisher_, Publish(_, _)).WillRepeatedly(Return(Published()));
  EXPECT_CALL(*store_, MarkPublished(_, _)).WillOnce(Return(size_t{2}));

  CommitResult result = hook_->Commit(JoinCommand(), JoinEvents());

  ASSERT_EQ(result.status, CommitStatus::kCommitted);
  EXPECT_EQ(last_request_.command.command_id, "cmd-1");
  EXPECT_EQ(last_request_.now_ms, 1'000'000);
  EXPECT_EQ(last_request_.lease_until_ms, 1'000'000 + 2 * 250 + 2000);
  EXPECT_EQ(last_request_.token.size(), 32u);
  ASSERT_EQ(last_request_.rows.size(), 2u);
  EXPECT_EQ(last_request_.rows[0].event_id, "evt-1");
  EXPECT_EQ(last_request_.rows[0].room_id, "room-1");
  EXPECT_EQ(last_request_.rows[0].command_id, "cmd-1");
  EXPECT_NE(last_request_.rows[0].envelope.find(R"("node_id":"node-a")"), std::string::npos);
  EXPECT_NE(last_request_.rows[0].envelope.find(R"("occurred_at_ms":1000000)"),
            std::string::npos);
}

TEST_F(HookTest, SyncSuccessMarksEveryDeliveredRowPublishedWithTheCommitToken) {
  ExpectCommit({11, 12});
  EXPECT_CALL(*store_, HasEarlierPending("room-1", 11)).WillOnce(Return(false));
  EXPECT_CALL(*publisher_, Publish(Field(&Envelope::event_id, "evt-1"), _))
      .WillOnce(Return(Published()));
  // The non-IM type is the publisher's no-op success.
  EXPECT_CALL(*publisher_, Publish(Field(&Envelope::event_id, "evt-2"), _))
      .WillOnce(Return(Skipped()));
  EXPECT_CALL(*store_, MarkPublished(_, IdsAre(std::vector<int64_t>{11, 12})))
      .WillOnce([this](const std::string& token, std::span<const int64_t>) {
        EXPECT_EQ(token, last_request_.token);
        return Result<size_t>(2);
      });

  CommitResult result = hook_->Commit(JoinCommand(), JoinEvents());

  ASSERT_EQ(result.status, CommitStatus::kCommitted);
  EXPECT_EQ(result.events[0].state, DeliveryState::kPublished);
  EXPECT_EQ(result.events[1].state, DeliveryState::kSkipped);
}

TEST_F(HookTest, FailedMarkAfterSyncSuccessDoesNotFailTheCommand) {
  ExpectCommit({11});
  EXPECT_CALL(*store_, HasEarlierPending(_, _)).WillOnce(Return(false));
  EXPECT_CALL(*publisher_, Publish(_, _)).WillOnce(Return(Published()));
  EXPECT_CALL(*store_, MarkPublished(_, _))
      .WillOnce(Return(Fail(ErrorCode::kUnavailable, "server gone")));

  CommitResult result =
      hook_->Commit(JoinCommand(), {Event{"evt-1", "RoomUserJoined", 5, 0, "{}"}});

  EXPECT_EQ(result.status, CommitStatus::kCommitted);
  EXPECT_EQ(result.events[0].state, DeliveryState::kPublished);
  ASSERT_FALSE(logs_.empty());
  EXPECT_NE(logs_.back().find("may be sent again"), std::string::npos);
}

TEST_F(HookTest, EarlierPendingRowOfTheRoomHoldsTheSyncPublish) {
  ExpectCommit({21, 22});
  EXPECT_CALL(*store_, HasEarlierPending("room-1", 21)).WillOnce(Return(true));
  EXPECT_CALL(*store_, Release(_, IdsAre(std::vector<int64_t>{21, 22})))
      .WillOnce(Return(size_t{2}));

  CommitResult result = hook_->Commit(JoinCommand(), JoinEvents());

  EXPECT_EQ(result.status, CommitStatus::kCommitted);
  EXPECT_EQ(result.events[0].state, DeliveryState::kPending);
  EXPECT_NE(result.events[0].error.find("earlier event"), std::string::npos);
}

TEST_F(HookTest, DuplicateCommandPublishesNothing) {
  EXPECT_CALL(*store_, CommitCommand(_, _)).WillOnce(Return(CommitWrite{true, {}}));

  CommitResult result = hook_->Commit(JoinCommand(), JoinEvents());

  EXPECT_EQ(result.status, CommitStatus::kDuplicate);
  EXPECT_TRUE(result.events.empty());
}

TEST_F(HookTest, StoreFailureFailsTheCommandAndPublishesNothing) {
  EXPECT_CALL(*store_, CommitCommand(_, _))
      .WillOnce(Return(Fail(ErrorCode::kUnavailable, "mysql_stmt_execute: server gone")));

  CommitResult result = hook_->Commit(JoinCommand(), JoinEvents());

  EXPECT_EQ(result.status, CommitStatus::kFailed);
  EXPECT_EQ(result.error.code, ErrorCode::kUnavailable);
}

TEST_F(HookTest, CallerStatementsReachTheStoreTransaction) {
  bool ran = false;
  EXPECT_CALL(*store_, CommitCommand(_, _))
      .WillOnce([](const CommitRequest&, const CallerStatements& statements) {
        struct NoopTx : Transaction {
          Status Execute(std::string_view, const std::vector<SqlValue>&) override { return {}; }
        } tx;
        EXPECT_TRUE(statements(tx).ok());
        return Result<CommitWrite>(CommitWrite{true, {}});
      });

  (void)hook_->Commit(JoinCommand(), JoinEvents(), [&ran](Transaction&) {
    ran = true;
    return Status();
  });

  EXPECT_TRUE(ran);
}

TEST_F(HookTest, InvalidInputIsRefusedBeforeAnyWrite) {
  struct Case {
    const char* name;
    Command command;
    std::vector<Event> events;
    const char* expect;
  } cases[] = {
      {"no command_id", Command{"", "r", "JoinRoom", "", 1, "{}"}, {}, "command_id"},
      {"no room", Command{"c", "", "JoinRoom", "", 1, "{}"}, {}, "room_id"},
      {"no type", Command{"c", "r", "", "", 1, "{}"}, {}, "command_type"},
      {"event without id", JoinCommand(), {Event{"", "T", 1, 0, "{}"}}, "event_id"},
      {"payload not object", JoinCommand(), {Event{"e", "T", 1, 0, "[1]"}}, "payload"},
  };
  for (const auto& c : cases) {
    CommitResult result = hook_->Commit(c.command, c.events);
    EXPECT_EQ(result.status, CommitStatus::kFailed) << c.name;
    EXPECT_EQ(result.error.code, ErrorCode::kInvalidArgument) << c.name;
    EXPECT_NE(result.error.message.find(c.expect), std::string::npos)
        << c.name << ": " << result.error.message;
  }
}

TEST(ClaimTokenTest, TokensAreDistinctHex) {
  std::string a = NewClaimToken();
  std::string b = NewClaimToken();
  EXPECT_NE(a, b);
  EXPECT_EQ(a.find_first_not_of("0123456789abcdef"), std::string::npos);
}

}  // namespace
}  // namespace room_outbox::testing
