// The hook at its seams (store, publisher, clock): every acceptance row of the original
// specification that concerns the command path, the command's one sync_publish_timeout on the
// Hook's clock, and the outcome of a commit whose connection failed.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/claim_token.h"
#include "hook_fixture.h"

namespace room_outbox::testing {
namespace {

using std::chrono::milliseconds;

using ::testing::_;
using ::testing::ElementsAre;
using ::testing::Eq;
using ::testing::Field;
using ::testing::NiceMock;
using ::testing::Return;

class HookTest : public HookFixture {
 protected:
  // As the Tencent IM publisher with the default skip_event_types.
  HookTest() {
    Build(DefaultOptions(), [](std::string_view t) { return t != "RoomHeatChanged"; });
  }

  static Command JoinCommand() {
    return Command{"cmd-1", "room-1", "JoinRoom", "req-1", 5, R"({"user":"u1"})"};
  }
  // One event sent to IM, one of a type never sent.
  static std::vector<Event> JoinEvents() {
    return {Event{"evt-1", "RoomUserJoined", 5, 0, R"({"user":"u1"})"},
            Event{"evt-2", "RoomHeatChanged", 5, 0, R"({"heat":10})"}};
  }
  // Two events sent to IM.
  static std::vector<Event> GiftEvents() {
    return {Event{"evt-1", "RoomUserJoined", 5, 0, "{}"},
            Event{"evt-3", "RoomGiftSent", 5, 0, "{}"}};
  }
  // Three events sent to IM.
  static std::vector<Event> ThreeEvents() {
    return {Event{"evt-1", "RoomUserJoined", 5, 0, "{}"},
            Event{"evt-3", "RoomGiftSent", 5, 0, "{}"}, Event{"evt-4", "RoomGiftSent", 5, 0, "{}"}};
  }
  // The store's answer; its lease starts now on the Hook's clock.
  internal::CommitWrite Written(
      std::vector<int64_t> ids,
      internal::CommitOutcome outcome = internal::CommitOutcome::kCommitted) const {
    internal::CommitWrite write;
    write.outcome = outcome;
    write.row_ids = std::move(ids);
    write.server_now_ms = 5'000'000;
    write.lease_start_ms = clock_->SteadyMs();
    if (outcome == internal::CommitOutcome::kCommitLost) {
      write.commit_error = Error{ErrorCode::kUnavailable, "mysql_real_query(commit): lost"};
    }
    return write;
  }
  void ExpectCommit(internal::CommitWrite write) {
    EXPECT_CALL(*store_, CommitCommand(_, _))
        .WillOnce([this, write](const internal::CommitRequest& request, const CallerStatements&) {
          last_request_ = request;
          return core::Result<internal::CommitWrite>(write);
        });
  }
  void ExpectCommit(std::vector<int64_t> ids) { ExpectCommit(Written(std::move(ids))); }
};

TEST_F(HookTest, SyncFailureStillReportsCommittedAndLeavesRowsPendingUncounted) {
  ExpectCommit({11, 12});
  // The command's one sync_publish_timeout (250ms from the insert) bounds the publish.
  EXPECT_CALL(*publisher_, Publish(EventIdIs("evt-1"), Eq(milliseconds(250))))
      .WillOnce(Return(FailedWith(core::PublishStatus::kRetryable, "HTTP 502")));
  // The second event must not overtake the failed first one: it is not attempted.
  // The rows go back to the relay unattempted: Release, never MarkFailed (a StrictMock fails on
  // any unexpected call), so retry_count stays 0.
  EXPECT_CALL(*store_, Release(_, IdsAre(std::vector<int64_t>{11, 12})))
      .WillOnce(Return(size_t{2}));

  CommitResult result = hook_->Commit(JoinCommand(), GiftEvents());

  EXPECT_EQ(result.status, CommitStatus::kCommitted);
  ASSERT_EQ(result.events.size(), 2u);
  EXPECT_EQ(result.events[0].state, DeliveryState::kPending);
  EXPECT_EQ(result.events[0].error, "HTTP 502");
  EXPECT_EQ(result.events[1].state, DeliveryState::kPending);
}

TEST_F(HookTest, CommitCarriesALeaseDurationAndNoHostTime) {
  ExpectCommit({11, 12});
  EXPECT_CALL(*publisher_, Publish(_, _)).WillOnce(Return(Published()));
  EXPECT_CALL(*store_, MarkPublished(_, _)).WillOnce(Return(size_t{1}));

  CommitResult result = hook_->Commit(JoinCommand(), JoinEvents());

  ASSERT_EQ(result.status, CommitStatus::kCommitted);
  EXPECT_EQ(last_request_.command.command_id, "cmd-1");
  // One pending event: sync_publish_timeout plus the margin, counted by the server from the
  // insert.
  EXPECT_EQ(last_request_.sync_lease, std::chrono::milliseconds(250 + 2000));
  EXPECT_TRUE(last_request_.check_earlier_pending);
  EXPECT_EQ(last_request_.token.size(), 32u);
  ASSERT_EQ(last_request_.rows.size(), 2u);
  EXPECT_EQ(last_request_.rows[0].event_id, "evt-1");
  EXPECT_EQ(last_request_.rows[0].room_id, "room-1");
  EXPECT_EQ(last_request_.rows[0].command_id, "cmd-1");
  EXPECT_FALSE(last_request_.rows[0].published);
  EXPECT_TRUE(last_request_.rows[1].published);  // never sent: written published
  EXPECT_NE(last_request_.rows[0].envelope.find(R"("node_id":"node-a")"), std::string::npos);
  // occurred_at_ms is information for clients: the host's clock is fine there.
  EXPECT_NE(last_request_.rows[0].envelope.find(R"("occurred_at_ms":1000000)"), std::string::npos);
}

TEST_F(HookTest, SkippedTypesAreNeitherSentNorMarkedNorReleased) {
  ExpectCommit({11, 12});
  EXPECT_CALL(*publisher_, Publish(EventIdIs("evt-1"), _)).WillOnce(Return(Published()));
  EXPECT_CALL(*store_, MarkPublished(_, IdsAre(std::vector<int64_t>{11})))
      .WillOnce([this](const std::string& token, std::span<const int64_t>) {
        EXPECT_EQ(token, last_request_.token);
        return core::Result<size_t>(1);
      });

  CommitResult result = hook_->Commit(JoinCommand(), JoinEvents());

  ASSERT_EQ(result.status, CommitStatus::kCommitted);
  EXPECT_EQ(result.events[0].state, DeliveryState::kPublished);
  EXPECT_EQ(result.events[1].state, DeliveryState::kSkipped);
}

TEST_F(HookTest, OnlySkippedTypesMeanNoLeaseAndNoSyncPublish) {
  ExpectCommit({11});

  CommitResult result =
      hook_->Commit(JoinCommand(), {Event{"evt-2", "RoomHeatChanged", 5, 0, "{}"}});

  ASSERT_EQ(result.status, CommitStatus::kCommitted);
  EXPECT_EQ(result.events[0].state, DeliveryState::kSkipped);
  EXPECT_EQ(last_request_.sync_lease, std::chrono::milliseconds(0));
}

TEST_F(HookTest, FailedMarkAfterSyncSuccessDoesNotFailTheCommandAndIsKept) {
  ExpectCommit({11});
  EXPECT_CALL(*publisher_, Publish(_, _)).WillOnce(Return(Published()));
  EXPECT_CALL(*store_, MarkPublished(_, _))
      .WillOnce(Return(core::Fail(ErrorCode::kUnavailable, "server gone")))
      .WillOnce(Return(size_t{1}));  // the late mark, as the Hook closes

  CommitResult result =
      hook_->Commit(JoinCommand(), {Event{"evt-1", "RoomUserJoined", 5, 0, "{}"}});

  EXPECT_EQ(result.status, CommitStatus::kCommitted);
  EXPECT_EQ(result.events[0].state, DeliveryState::kPublished);
  ASSERT_FALSE(logs_.empty());
  EXPECT_NE(logs_.back().find("kept to be written when the database answers again"),
            std::string::npos);
  EXPECT_EQ(hook_->Metrics().late_marks_waiting, 1u);
}

TEST_F(HookTest, EarlierPendingRowOfTheRoomHoldsTheSyncPublish) {
  internal::CommitWrite write = Written({21, 22});
  write.earlier_pending = true;  // read inside the commit transaction: no extra round trip
  ExpectCommit(write);
  EXPECT_CALL(*store_, Release(_, IdsAre(std::vector<int64_t>{21}))).WillOnce(Return(size_t{1}));

  CommitResult result = hook_->Commit(JoinCommand(), JoinEvents());

  EXPECT_EQ(result.status, CommitStatus::kCommitted);
  EXPECT_EQ(result.events[0].state, DeliveryState::kPending);
  EXPECT_NE(result.events[0].error.find("earlier event"), std::string::npos);
  // A type never sent takes no part in room order.
  EXPECT_EQ(result.events[1].state, DeliveryState::kSkipped);
}

TEST_F(HookTest, SyncPublishNeverOutlivesTheLease) {
  internal::CommitWrite write = Written({11, 12});
  write.lease_start_ms = clock_->SteadyMs() - 3'600'000;  // an hour ago
  ExpectCommit(write);
  EXPECT_CALL(*store_, Release(_, IdsAre(std::vector<int64_t>{11, 12})))
      .WillOnce(Return(size_t{2}));

  CommitResult result = hook_->Commit(JoinCommand(), GiftEvents());

  EXPECT_EQ(result.status, CommitStatus::kCommitted);
  EXPECT_NE(result.events[0].error.find("lease ran out"), std::string::npos);
}

TEST_F(HookTest, EachPublishIsBoundedByTheTimeLeftOfTheWindow) {
  internal::CommitWrite write = Written({11});
  write.lease_start_ms = clock_->SteadyMs() - 150;
  ExpectCommit(write);
  EXPECT_CALL(*publisher_, Publish(_, Eq(milliseconds(100)))).WillOnce(Return(Published()));
  EXPECT_CALL(*store_, MarkPublished(_, _)).WillOnce(Return(size_t{1}));

  EXPECT_EQ(hook_->Commit(JoinCommand(), {Event{"evt-1", "RoomUserJoined", 5, 0, "{}"}}).status,
            CommitStatus::kCommitted);
}

TEST_F(HookTest, TheWholeCommandGetsOneSyncPublishTimeout) {
  ExpectCommit({11, 12, 13});
  std::vector<milliseconds> timeouts;
  EXPECT_CALL(*publisher_, Publish(_, _))
      .Times(3)
      .WillRepeatedly([this, &timeouts](const core::PublishMessage&, milliseconds timeout) {
        timeouts.push_back(timeout);
        clock_->Advance(milliseconds(100));  // IM answers in 100ms
        return Published();
      });
  EXPECT_CALL(*store_, MarkPublished(_, IdsAre(std::vector<int64_t>{11, 12, 13})))
      .WillOnce(Return(size_t{3}));

  CommitResult result = hook_->Commit(JoinCommand(), ThreeEvents());

  ASSERT_EQ(result.status, CommitStatus::kCommitted);
  // Each publish gets what is left of the command's 250ms, not 250ms of its own.
  EXPECT_THAT(timeouts, ElementsAre(milliseconds(250), milliseconds(150), milliseconds(50)));
  for (const EventDelivery& delivery : result.events) {
    EXPECT_EQ(delivery.state, DeliveryState::kPublished) << delivery.event_id;
  }
}

TEST_F(HookTest, TheSyncLeaseRunningOutMidCommandLeavesTheRestToTheRelay) {
  ExpectCommit({11, 12, 13});
  EXPECT_CALL(*publisher_, Publish(EventIdIs("evt-1"), Eq(milliseconds(250))))
      .WillOnce([this](const core::PublishMessage&, milliseconds) {
        clock_->Advance(milliseconds(200));
        return Published();
      });
  EXPECT_CALL(*publisher_, Publish(EventIdIs("evt-3"), Eq(milliseconds(50))))
      .WillOnce([this](const core::PublishMessage&, milliseconds) {
        clock_->Advance(milliseconds(50));  // answered just as the command's time ran out
        return Published();
      });
  // evt-4 is never sent (a StrictMock fails on a third Publish): released, retry_count unchanged.
  EXPECT_CALL(*store_, MarkPublished(_, IdsAre(std::vector<int64_t>{11, 12})))
      .WillOnce(Return(size_t{2}));
  EXPECT_CALL(*store_, Release(_, IdsAre(std::vector<int64_t>{13}))).WillOnce(Return(size_t{1}));

  CommitResult result = hook_->Commit(JoinCommand(), ThreeEvents());

  ASSERT_EQ(result.status, CommitStatus::kCommitted);
  EXPECT_EQ(result.events[0].state, DeliveryState::kPublished);
  EXPECT_EQ(result.events[1].state, DeliveryState::kPublished);
  EXPECT_EQ(result.events[2].state, DeliveryState::kPending);
  EXPECT_EQ(result.events[2].error, "sync publish skipped: the sync lease ran out");
}

TEST_F(HookTest, TheCommandsTimeCountsFromTheLeaseStartNotFromTheCall) {
  EXPECT_CALL(*store_, CommitCommand(_, _))
      .WillOnce([this](const internal::CommitRequest&, const CallerStatements&) {
        clock_->Advance(milliseconds(80));  // BEGIN, the command log, the caller's statements
        internal::CommitWrite write = Written({11});  // the lease starts with the outbox insert
        clock_->Advance(milliseconds(30));            // the insert and COMMIT
        return core::Result<internal::CommitWrite>(write);
      });
  // 250ms from the lease start, 30ms of which are gone: not 250 from the publish, not 170 from
  // the call.
  EXPECT_CALL(*publisher_, Publish(_, Eq(milliseconds(220)))).WillOnce(Return(Published()));
  EXPECT_CALL(*store_, MarkPublished(_, _)).WillOnce(Return(size_t{1}));

  EXPECT_EQ(hook_->Commit(JoinCommand(), {Event{"evt-1", "RoomUserJoined", 5, 0, "{}"}}).status,
            CommitStatus::kCommitted);
}

TEST_F(HookTest, DuplicateCommandPublishesNothing) {
  ExpectCommit(Written({}, internal::CommitOutcome::kDuplicate));

  CommitResult result = hook_->Commit(JoinCommand(), JoinEvents());

  EXPECT_EQ(result.status, CommitStatus::kDuplicate);
  EXPECT_TRUE(result.events.empty());
}

TEST_F(HookTest, NonConnectionFailureFailsAtOnceAndPublishesNothing) {
  EXPECT_CALL(*store_, CommitCommand(_, _))
      .WillOnce(Return(core::Fail(ErrorCode::kNotFound, "mysql_stmt_prepare: no such table")));

  CommitResult result = hook_->Commit(JoinCommand(), JoinEvents());

  EXPECT_EQ(result.status, CommitStatus::kFailed);
  EXPECT_EQ(result.error.code, ErrorCode::kNotFound);
}

TEST_F(HookTest, ConnectionFailureBeforeCommitIsRetriedOnceTransparently) {
  EXPECT_CALL(*store_, CommitCommand(_, _))
      .WillOnce(Return(core::Fail(ErrorCode::kUnavailable, "mysql_real_query(begin): server gone")))
      .WillOnce(Return(Written({11, 12})));
  EXPECT_CALL(*publisher_, Publish(_, _)).WillOnce(Return(Published()));
  EXPECT_CALL(*store_, MarkPublished(_, IdsAre(std::vector<int64_t>{11})))
      .WillOnce(Return(size_t{1}));

  CommitResult result = hook_->Commit(JoinCommand(), JoinEvents());

  EXPECT_EQ(result.status, CommitStatus::kCommitted);
  EXPECT_EQ(result.events[0].state, DeliveryState::kPublished);
}

TEST_F(HookTest, ConnectionFailureBeforeCommitIsRetriedOnlyOnce) {
  EXPECT_CALL(*store_, CommitCommand(_, _))
      .Times(2)
      .WillRepeatedly(Return(core::Fail(ErrorCode::kUnavailable, "read-only [errno 1290]")));

  CommitResult result = hook_->Commit(JoinCommand(), JoinEvents());

  EXPECT_EQ(result.status, CommitStatus::kFailed);
  EXPECT_EQ(result.error.code, ErrorCode::kUnavailable);
  EXPECT_TRUE(result.events.empty());
}

TEST_F(HookTest, DeadlockVictimIsRetriedOnce) {
  EXPECT_CALL(*store_, CommitCommand(_, _))
      .WillOnce(Return(core::Fail(ErrorCode::kAborted, "Deadlock found [errno 1213]")))
      .WillOnce(Return(Written({11, 12})));
  EXPECT_CALL(*publisher_, Publish(_, _)).WillOnce(Return(Published()));
  EXPECT_CALL(*store_, MarkPublished(_, _)).WillOnce(Return(size_t{1}));

  EXPECT_EQ(hook_->Commit(JoinCommand(), JoinEvents()).status, CommitStatus::kCommitted);
}

TEST_F(HookTest, LostCommitFoundInTheLogIsCommittedAndGoesOnToTheSyncPublish) {
  ExpectCommit(Written({11, 12}, internal::CommitOutcome::kCommitLost));
  internal::FoundCommand found{{31, 32}};  // the ids as read back by command_id
  EXPECT_CALL(*store_, FindCommand("cmd-1"))
      .WillOnce(Return(core::Result<std::optional<internal::FoundCommand>>(found)));
  EXPECT_CALL(*publisher_, Publish(EventIdIs("evt-1"), _)).WillOnce(Return(Published()));
  EXPECT_CALL(*store_, MarkPublished(_, IdsAre(std::vector<int64_t>{31})))
      .WillOnce(Return(size_t{1}));

  CommitResult result = hook_->Commit(JoinCommand(), JoinEvents());

  EXPECT_EQ(result.status, CommitStatus::kCommitted);
  EXPECT_EQ(result.events[0].state, DeliveryState::kPublished);
  EXPECT_EQ(result.events[1].state, DeliveryState::kSkipped);
}

TEST_F(HookTest, LostCommitAbsentFromTheLogIsFailed) {
  ExpectCommit(Written({11, 12}, internal::CommitOutcome::kCommitLost));
  EXPECT_CALL(*store_, FindCommand("cmd-1"))
      .WillOnce(Return(core::Result<std::optional<internal::FoundCommand>>(std::nullopt)));
  EXPECT_CALL(*store_, ServerReadOnly()).WillOnce(Return(core::Result<bool>(false)));

  CommitResult result = hook_->Commit(JoinCommand(), JoinEvents());

  EXPECT_EQ(result.status, CommitStatus::kFailed);
  EXPECT_EQ(result.error.code, ErrorCode::kUnavailable);  // worth a retry
  EXPECT_TRUE(result.events.empty());
}

TEST_F(HookTest, LostCommitAbsentFromAReadOnlyServersLogIsUnknown) {
  ExpectCommit(Written({11, 12}, internal::CommitOutcome::kCommitLost));
  EXPECT_CALL(*store_, FindCommand("cmd-1"))
      .WillOnce(Return(core::Result<std::optional<internal::FoundCommand>>(std::nullopt)));
  EXPECT_CALL(*store_, ServerReadOnly()).WillOnce(Return(core::Result<bool>(true)));

  CommitResult result = hook_->Commit(JoinCommand(), JoinEvents());

  // A replica the failover reached may not have the command yet: no proof of a rollback.
  EXPECT_EQ(result.status, CommitStatus::kUnknown);
  EXPECT_NE(result.error.message.find("read-only server"), std::string::npos)
      << result.error.message;
  EXPECT_NE(result.error.message.find("retry with the same command_id"), std::string::npos);
  EXPECT_TRUE(result.events.empty());
}

TEST_F(HookTest, LostCommitAbsentFromTheLogOfAServerThatCannotSayIsFailed) {
  ExpectCommit(Written({11}, internal::CommitOutcome::kCommitLost));
  EXPECT_CALL(*store_, FindCommand("cmd-1"))
      .WillOnce(Return(core::Result<std::optional<internal::FoundCommand>>(std::nullopt)));
  EXPECT_CALL(*store_, ServerReadOnly())
      .WillOnce(Return(core::Fail(ErrorCode::kUnavailable, "mysql_stmt_execute: lost")));

  EXPECT_EQ(hook_->Commit(JoinCommand(), JoinEvents()).status, CommitStatus::kFailed);
}

TEST_F(HookTest, LostCommitWhoseLookupCannotBeMadeIsUnknown) {
  ExpectCommit(Written({11, 12}, internal::CommitOutcome::kCommitLost));
  EXPECT_CALL(*store_, FindCommand("cmd-1"))
      .Times(2)
      .WillRepeatedly(Return(core::Fail(ErrorCode::kUnavailable, "mysql_real_connect: refused")));

  CommitResult result = hook_->Commit(JoinCommand(), JoinEvents());

  EXPECT_EQ(result.status, CommitStatus::kUnknown);
  EXPECT_NE(result.error.message.find("retry with the same command_id"), std::string::npos);
  EXPECT_TRUE(result.events.empty());
}

TEST_F(HookTest, LostCommitWhoseLookupFailsForGoodIsUnknownWithoutASecondLookup) {
  ExpectCommit(Written({11}, internal::CommitOutcome::kCommitLost));
  EXPECT_CALL(*store_, FindCommand("cmd-1"))
      .WillOnce(Return(core::Fail(ErrorCode::kPermissionDenied, "SELECT command denied")));

  CommitResult result = hook_->Commit(JoinCommand(), JoinEvents());

  EXPECT_EQ(result.status, CommitStatus::kUnknown);
  EXPECT_NE(result.error.message.find("SELECT command denied"), std::string::npos);
}

TEST_F(HookTest, LostCommitIsNeverRunAgain) {
  // A lost COMMIT answer may have committed: running the command again would be wrong, so there
  // is exactly one CommitCommand.
  EXPECT_CALL(*store_, CommitCommand(_, _))
      .Times(1)
      .WillOnce(Return(Written({11}, internal::CommitOutcome::kCommitLost)));
  EXPECT_CALL(*store_, FindCommand(_))
      .WillOnce(Return(core::Result<std::optional<internal::FoundCommand>>(std::nullopt)));
  EXPECT_CALL(*store_, ServerReadOnly()).WillOnce(Return(core::Result<bool>(false)));

  EXPECT_EQ(hook_->Commit(JoinCommand(), JoinEvents()).status, CommitStatus::kFailed);
}

TEST_F(HookTest, CallerStatementsReachTheStoreTransaction) {
  bool ran = false;
  EXPECT_CALL(*store_, CommitCommand(_, _))
      .WillOnce([](const internal::CommitRequest&, const CallerStatements& statements) {
        struct NoopTx : Transaction {
          Status Execute(std::string_view, const std::vector<core::SqlValue>&) override {
            return {};
          }
        } tx;
        EXPECT_TRUE(statements(tx).ok());
        internal::CommitWrite write;
        write.outcome = internal::CommitOutcome::kDuplicate;
        return core::Result<internal::CommitWrite>(write);
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
  std::string a = core::NewClaimToken();
  std::string b = core::NewClaimToken();
  EXPECT_NE(a, b);
  EXPECT_EQ(a.find_first_not_of("0123456789abcdef"), std::string::npos);
}

}  // namespace
}  // namespace room_outbox::testing
